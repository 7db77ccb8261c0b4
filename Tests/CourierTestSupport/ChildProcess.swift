import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program the tests run: started with `posix_spawn`, its output read from pipes, its exit
/// waited for on a thread of its own.
///
/// Not Foundation's `Process`: on Linux its `run()` copies a whole 256-byte `d_name` out of each
/// `/proc/self/fd` entry (swift-corelibs-foundation #5472, in Swift 6.3.1), which reads past
/// glibc's directory buffer and crashes the test process with signal 11 once about 1,350 file
/// descriptors are open, as the parallel suite's servers and connections can make it. Its pipes
/// also outlived their runs. Here every descriptor is ours: the pipes are closed by the reader at
/// end of file, and the child gets descriptors 0–2 and nothing else.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A pipe the test reads (``ChildProcess/readOutput(_:)`` or ``ChildProcess/readError(_:)``).
        case pipe
        /// The same place as standard output (for standard error only).
        case standardOutput
    }

    /// How the child ended.
    public enum Termination: Sendable, Equatable {
        /// It exited with this status (`-1` when its status could not be read).
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// The status a shell would report: the exit status, or 128 + the signal.
        public var status: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }
    }

    /// A spawn that failed, with `posix_spawn`'s error number.
    public struct SpawnError: Error, CustomStringConvertible {
        /// The program.
        public let path: String
        /// The `errno` value.
        public let code: Int32

        /// The program and the system's reason, in words.
        public var description: String { "could not start \(path): \(String(cString: strerror(code)))" }
    }

    /// The child's process id.
    public let processIdentifier: pid_t
    /// The read end of standard output's pipe until a reader takes it (it closes it at the end):
    /// taken once, so that a second read cannot close a descriptor that another file now has.
    private let outputDescriptor: TestLock<Int32?>
    /// The read end of standard error's pipe, taken as standard output's is.
    private let errorDescriptor: TestLock<Int32?>
    /// The termination once the child has been reaped, and who waits for it.
    private let exit = TestLock<(termination: Termination?, handlers: [@Sendable (Termination) -> Void])>((nil, []))

    /// Starts `path` with `arguments` (not counting the program's own name), in `environment` and
    /// `workingDirectory` (this process's when `nil`), with standard input from `/dev/null`.
    public init(
        path: String,
        arguments: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        workingDirectory: String? = nil,
        standardOutput: Stream = .pipe,
        standardError: Stream = .pipe
    ) throws {
        var actions = Self.makeFileActions()
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let workingDirectory, !Self.addChangeDirectory(&actions, workingDirectory) {
            throw SpawnError(path: path, code: ENOSYS)
        }
        var outputPipe: (read: Int32, write: Int32)?
        var errorPipe: (read: Int32, write: Int32)?
        if standardOutput == .pipe { outputPipe = try Self.makePipe() }
        if standardError == .pipe {
            do {
                errorPipe = try Self.makePipe()
            } catch {
                if let outputPipe { [outputPipe.read, outputPipe.write].forEach { _ = close($0) } }
                throw error
            }
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let outputPipe {
            posix_spawn_file_actions_adddup2(&actions, outputPipe.write, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        switch standardError {
        case .pipe:
            if let errorPipe { posix_spawn_file_actions_adddup2(&actions, errorPipe.write, 2) }
        case .standardOutput:
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .null:
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        var attributes = Self.makeAttributes()
        defer { posix_spawnattr_destroy(&attributes) }
        // Everything but 0–2 closes in the child: a test's sockets or another child's pipe
        // left open there would keep a connection or an end of file from happening.
        Self.addCloseFrom3(&actions, &attributes)

        let argv = ([path] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv + [nil], envp + [nil])
        // The child holds the write ends now (or never will): close ours so reads see end of file.
        for pipe in [outputPipe, errorPipe].compactMap({ $0 }) { close(pipe.write) }
        guard result == 0 else {
            for pipe in [outputPipe, errorPipe].compactMap({ $0 }) { close(pipe.read) }
            throw SpawnError(path: path, code: result)
        }
        let processID = pid
        processIdentifier = processID
        outputDescriptor = TestLock(outputPipe?.read)
        errorDescriptor = TestLock(errorPipe?.read)
        // Reaped on a thread of its own: `waitpid` blocks, and the task pool's few threads must not.
        Thread { [exit] in
            // Waited for without reaping (WNOWAIT), then reaped under the lock that `send(_:)`
            // takes: until the termination is recorded the id stays the child's (a zombie), so a
            // signal can never reach another process given the id since.
            var info = siginfo_t()
            var waited: Int32
            repeat {
                waited = waitid(P_PID, id_t(processID), &info, WEXITED | WNOWAIT)
            } while waited < 0 && errno == EINTR
            let handlers = exit.withLock { state in
                var status: Int32 = 0
                let reaped = waitpid(processID, &status, 0)
                // WIFEXITED/WEXITSTATUS/WTERMSIG, which Swift does not import: the low 7 bits hold
                // the signal, 0 for a normal exit, whose status is in the next byte.
                let signal = status & 0x7f
                let termination: Termination =
                    waited < 0 || reaped < 0
                    ? .exited(-1) : signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
                state.termination = termination
                defer { state.handlers = [] }
                return state.handlers.map { handler in { handler(termination) } }
            }
            handlers.forEach { $0() }
        }.start()
    }

    deinit {
        // A pipe nobody read: closed here, so that it does not outlive the run.
        for descriptor in [outputDescriptor.withLock({ $0.take() }), errorDescriptor.withLock({ $0.take() })] {
            if let descriptor { close(descriptor) }
        }
    }

    /// Calls `handler` once when the child has ended: on another thread, or on this one at once if
    /// it has ended already.
    public func onExit(_ handler: @escaping @Sendable (Termination) -> Void) {
        let ended = exit.withLock { state -> Termination? in
            if let termination = state.termination { return termination }
            state.handlers.append(handler)
            return nil
        }
        if let ended { handler(ended) }
    }

    /// How the child ended, waited for without blocking a thread; `nil` after `timeout` seconds.
    public func termination(within timeout: Double) async -> Termination? {
        await value(within: timeout) {
            await withCheckedContinuation { continuation in
                self.onExit { continuation.resume(returning: $0) }
            }
        }
    }

    /// Blocks the calling thread until the child ends, for synchronous helpers only; after
    /// `timeout` seconds it kills the child (`SIGKILL`) and waits for that.
    public func waitUntilExit(killingAfter timeout: Double) -> Termination {
        let done = DispatchSemaphore(value: 0)
        let result = TestLock<Termination?>(nil)
        onExit { termination in
            result.withLock { $0 = termination }
            done.signal()
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            send(SIGKILL)
            done.wait()
        }
        return result.withLock { $0 } ?? .exited(-1)
    }

    /// Sends `signal` (`SIGTERM`, `SIGKILL`) to the child; nothing once its exit has been seen,
    /// so that the signal cannot reach another process given its id since.
    public func send(_ signal: Int32) {
        exit.withLock { state in
            if state.termination == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// Reads standard output's pipe chunk by chunk, calling `sink` with each, until end of file;
    /// then closes it. It blocks (use a thread of its own for a long run); a second call reads
    /// nothing.
    public func readOutput(_ sink: (Data) -> Void) {
        if let descriptor = outputDescriptor.withLock({ $0.take() }) { Self.drain(descriptor, sink) }
    }

    /// Reads standard error's pipe as ``readOutput(_:)`` reads standard output's.
    public func readError(_ sink: (Data) -> Void) {
        if let descriptor = errorDescriptor.withLock({ $0.take() }) { Self.drain(descriptor, sink) }
    }

    /// Everything standard error's pipe holds to its end.
    public func readAllError() -> Data {
        var data = Data()
        readError { data.append($0) }
        return data
    }

    /// Everything standard output's pipe holds to its end.
    public func readAllOutput() -> Data {
        var data = Data()
        readOutput { data.append($0) }
        return data
    }

    /// Everything standard output's pipe holds to its end and how the child ended, blocking the
    /// calling thread (for synchronous helpers); a child still running after `timeout` seconds
    /// is killed (`SIGKILL`), which ends its output too.
    public func outputAndTermination(killingAfter timeout: Double) -> (output: Data, termination: Termination) {
        let killer = DispatchWorkItem { [self] in send(SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        defer { killer.cancel() }
        let output = readAllOutput()
        return (output, waitUntilExit(killingAfter: timeout))
    }

    /// Everything standard output's pipe holds to its end, read on a thread of its own; `nil`
    /// when the end has not come within `timeout` seconds (the reader then goes on until it does).
    public func allOutput(within timeout: Double) async -> Data? {
        await value(within: timeout) {
            await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: self.readAllOutput()) }.start()
            }
        }
    }

    private static func drain(_ descriptor: Int32, _ sink: (Data) -> Void) {
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                sink(Data(buffer[..<count]))
            } else if count == 0 || errno != EINTR {
                return
            }
        }
    }

    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { throw SpawnError(path: "pipe", code: errno) }
        // Close-on-exec, so that another child spawned meanwhile cannot hold them (the child's own
        // copies are made by dup2, which clears the flag).
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return (descriptors[0], descriptors[1])
    }

    // MARK: - Platform

    #if canImport(Darwin)
    private static func makeFileActions() -> posix_spawn_file_actions_t? {
        var actions: posix_spawn_file_actions_t?
        posix_spawn_file_actions_init(&actions)
        return actions
    }

    private static func makeAttributes() -> posix_spawnattr_t? {
        var attributes: posix_spawnattr_t?
        posix_spawnattr_init(&attributes)
        setSignals(&attributes, flags: Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
        return attributes
    }

    private static func addChangeDirectory(_ actions: inout posix_spawn_file_actions_t?, _ path: String) -> Bool {
        posix_spawn_file_actions_addchdir_np(&actions, path) == 0
    }

    /// Darwin closes every descriptor the file actions did not make (`POSIX_SPAWN_CLOEXEC_DEFAULT`,
    /// set with the attributes).
    private static func addCloseFrom3(
        _ actions: inout posix_spawn_file_actions_t?,
        _ attributes: inout posix_spawnattr_t?
    ) {}

    private static func setSignals(_ attributes: inout posix_spawnattr_t?, flags: Int16) {
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | flags)
    }
    #else
    private static func makeFileActions() -> posix_spawn_file_actions_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        return actions
    }

    private static func makeAttributes() -> posix_spawnattr_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        // The child starts with no signal blocked and every handler at its default, whatever the
        // spawning thread had (dispatch's threads block some): `SIGTERM` must end it.
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        return attributes
    }

    /// glibc's `posix_spawn_file_actions_addchdir_np` and `…_addclosefrom_np` (2.29, 2.34), which
    /// Swift's Glibc module does not import (they need `_GNU_SOURCE`).
    private static let addChangeDirectoryFunction = glibcFunction(
        "posix_spawn_file_actions_addchdir_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self
    )
    private static let addCloseFromFunction = glibcFunction(
        "posix_spawn_file_actions_addclosefrom_np",
        as: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self
    )

    private static func glibcFunction<Function>(_ name: String, as type: Function.Type) -> Function? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }

    private static func addChangeDirectory(_ actions: inout posix_spawn_file_actions_t, _ path: String) -> Bool {
        guard let function = addChangeDirectoryFunction else { return false }
        return function(&actions, path) == 0
    }

    /// Closes every descriptor above 2 in the child; without glibc's `closefrom` action (before
    /// 2.34) the close-on-exec flags must do.
    private static func addCloseFrom3(
        _ actions: inout posix_spawn_file_actions_t,
        _ attributes: inout posix_spawnattr_t
    ) {
        _ = addCloseFromFunction?(&actions, 3)
    }
    #endif
}

/// `read(2)`, named apart from ``ChildProcess``'s methods.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// The executable `name` that `swift build` put in the build products folder beside this test
/// bundle, and the places searched. On Linux the bundle is `CourierPackageTests.xctest` in that
/// folder; on macOS the test runner lives deeper inside the bundle, so a few parents are tried.
public func builtExecutable(named name: String) -> (url: URL?, searched: [String]) {
    let manager = FileManager.default
    var starts: [URL] = []
    if let executable = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        starts.append(URL(fileURLWithPath: executable))
    }
    starts.append(Bundle.main.bundleURL)
    if let first = CommandLine.arguments.first { starts.append(URL(fileURLWithPath: first)) }
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        starts.append(bundle.bundleURL)
    }
    var searched: [String] = []
    for start in starts {
        var folder = start.deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = folder.appendingPathComponent(name)
            searched.append(candidate.path)
            if manager.isExecutableFile(atPath: candidate.path) { return (candidate, searched) }
            folder = folder.deletingLastPathComponent()
        }
    }
    return (nil, searched)
}
