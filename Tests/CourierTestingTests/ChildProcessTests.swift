import CourierTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The test suites' program runner: output, exit status, signals, exactly-once exit handlers.
@Suite struct ChildProcessTests {
    @Test func readsBothStreamsAndTheExitStatus() async throws {
        let child = try ChildProcess(path: "/bin/sh", arguments: ["-c", "echo out; echo err >&2; exit 3"])
        let errors = await value(within: hangLimit) {
            await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: String(decoding: child.readAllError(), as: UTF8.self)) }
                    .start()
            }
        }
        let output = try #require(await child.allOutput(within: hangLimit))
        #expect(String(decoding: output, as: UTF8.self) == "out\n")
        #expect(errors == "err\n")
        #expect(await child.termination(within: hangLimit) == .exited(3))
        // A second read takes nothing (and closes nothing that is not its own).
        #expect(child.readAllOutput().isEmpty)
    }

    @Test func standardErrorMayJoinStandardOutput() throws {
        let child = try ChildProcess(
            path: "/bin/sh",
            arguments: ["-c", "echo one; echo two >&2"],
            standardOutput: .pipe,
            standardError: .standardOutput
        )
        let (output, termination) = child.outputAndTermination(killingAfter: hangLimit)
        #expect(String(decoding: output, as: UTF8.self) == "one\ntwo\n")
        #expect(termination == .exited(0))
    }

    @Test func aKilledChildReportsItsSignalAndLaterSignalsGoNowhere() async throws {
        // A child that would run for a minute: the test ends it.
        let child = try ChildProcess(path: "/bin/sleep", arguments: ["60"], standardOutput: .null, standardError: .null)
        child.send(SIGKILL)
        #expect(await child.termination(within: hangLimit) == .signalled(SIGKILL))
        child.send(SIGKILL)  // reaped: nothing is sent
        // A handler added after the exit runs once, at once.
        let calls = TestLock(0)
        child.onExit { _ in calls.withLock { $0 += 1 } }
        #expect(calls.withLock { $0 } == 1)
    }

    @Test func aChildThatOutlivesItsTimeIsKilled() throws {
        let child = try ChildProcess(path: "/bin/sleep", arguments: ["60"], standardError: .null)
        let (output, termination) = child.outputAndTermination(killingAfter: 0.2)
        #expect(output.isEmpty)
        #expect(termination == .signalled(SIGKILL))
    }

    @Test func theChildRunsInTheDirectoryGiven() throws {
        let child = try ChildProcess(path: "/bin/pwd", arguments: [], workingDirectory: "/")
        #expect(String(decoding: child.outputAndTermination(killingAfter: hangLimit).output, as: UTF8.self) == "/\n")
    }

    @Test func aMissingProgramFailsToStart() {
        #expect(throws: ChildProcess.SpawnError.self) {
            _ = try ChildProcess(path: "/nonexistent/program", arguments: [])
        }
    }
}
