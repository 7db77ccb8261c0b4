import CourierTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A finished run of the `courier` binary: its exit status and everything it wrote.
struct CourierRun: Sendable {
    /// The exit status (or 128 + the signal that ended it).
    let status: Int32
    /// Everything written to stdout, as bytes.
    let stdout: Data
    /// Everything written to stderr, as bytes.
    let stderr: Data

    /// stdout as text.
    var output: String { String(decoding: stdout, as: UTF8.self) }
    /// stderr as text.
    var errorOutput: String { String(decoding: stderr, as: UTF8.self) }

    /// Runs `courier` with `arguments` (stdin empty, stdout and stderr piped, so not terminals),
    /// killing it and failing when it has not exited within `timeout` seconds.
    static func run(
        _ arguments: [String],
        environment: [String: String] = [:],
        workingDirectory: URL? = nil,
        timeout: Double = 20,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> CourierRun {
        await ProcessSlots.shared.acquire()
        let running: RunningCourier
        do {
            running = try RunningCourier(arguments, environment: environment, workingDirectory: workingDirectory)
        } catch {
            await ProcessSlots.shared.release()
            throw error
        }
        let finished = await running.wait(timeout: timeout)
        await ProcessSlots.shared.release()
        guard let run = finished else {
            running.kill()
            _ = await running.wait(timeout: 5)
            Issue.record(
                "courier \(arguments.joined(separator: " ")) ran past \(timeout) s",
                sourceLocation: sourceLocation
            )
            throw TimeoutError()
        }
        return run
    }

    /// A run that did not end in time.
    struct TimeoutError: Error {}
}

/// A `courier` process started in the background, for tests that act while it runs.
final class RunningCourier: Sendable {
    private let process: ChildProcess
    /// The bytes read so far from each pipe, and the run once it ended.
    private let state = Mutex<
        (stdout: Data, stderr: Data, run: CourierRun?, waiters: [UUID: CheckedContinuation<CourierRun?, Never>])
    >(
        (Data(), Data(), nil, [:])
    )
    private let readers = DispatchGroup()

    /// Starts `courier` with `arguments`.
    init(_ arguments: [String], environment: [String: String] = [:], workingDirectory: URL? = nil) throws {
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "NO_COLOR")
        for (name, value) in environment { merged[name] = value }
        process = try ChildProcess(
            path: CourierBinary.url().path,
            arguments: arguments,
            environment: merged,
            workingDirectory: workingDirectory?.path
        )
        for isStdout in [true, false] {
            readers.enter()
            // A thread of its own, not a dispatch worker: blocking reads on the few workers Linux's
            // dispatch runs would stall every queue in the process (the library's tests included).
            Thread { [self] in
                let append: (Data) -> Void = { data in
                    self.state.withLock { if isStdout { $0.stdout.append(data) } else { $0.stderr.append(data) } }
                }
                if isStdout { process.readOutput(append) } else { process.readError(append) }
                readers.leave()
            }.start()
        }
        process.onExit { [self] termination in
            // The pipes may still hold output: wait for both readers to reach end of file.
            readers.notify(queue: .global()) { [self] in
                let (run, waiters) = state.withLock { current in
                    let run = CourierRun(status: termination.status, stdout: current.stdout, stderr: current.stderr)
                    current.run = run
                    defer { current.waiters = [:] }
                    return (run, Array(current.waiters.values))
                }
                waiters.forEach { $0.resume(returning: run) }
            }
        }
    }

    /// The process id.
    var processIdentifier: Int32 { process.processIdentifier }

    /// What stderr holds so far.
    var errorSoFar: String { String(decoding: state.withLock { $0.stderr }, as: UTF8.self) }

    /// Sends SIGKILL.
    func kill() {
        process.send(SIGKILL)
    }

    /// What stdout holds so far.
    var outputSoFar: String { String(decoding: state.withLock { $0.stdout }, as: UTF8.self) }

    /// Sends SIGTERM, as Ctrl-C's neighbour does.
    func terminate() {
        process.send(SIGTERM)
    }

    /// Sends SIGKILL as soon as `condition` holds; `false` if it never held within `timeout` s.
    func kill(timeout: Double, when condition: @escaping @Sendable () -> Bool) async -> Bool {
        let held = await Self.poll(timeout: timeout) {
            guard condition() else { return false }
            self.kill()
            return true
        }
        return held
    }

    /// Whether `condition` came to hold within `timeout` seconds, checked every 5 ms on a thread of
    /// its own (so a busy machine's task pool cannot delay what follows), for events that send no
    /// notification: a file growing, a line appearing.
    static func poll(timeout: Double, _ condition: @escaping @Sendable () -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread {
                let deadline = Date(timeIntervalSinceNow: timeout)
                while !condition() {
                    guard Date() < deadline else {
                        continuation.resume(returning: false)
                        return
                    }
                    usleep(5_000)
                }
                continuation.resume(returning: true)
            }.start()
        }
    }

    /// The finished run, or `nil` if it has not exited within `timeout` seconds.
    func wait(timeout: Double) async -> CourierRun? {
        await withCheckedContinuation { (continuation: CheckedContinuation<CourierRun?, Never>) in
            let id = UUID()
            let finished = state.withLock { current -> CourierRun? in
                if let run = current.run { return run }
                current.waiters[id] = continuation
                return nil
            }
            if let finished {
                continuation.resume(returning: finished)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
            }
        }
    }
}
