import CourierTestSupport
import Foundation
import Testing

/// `Session()` picks its transport from what the program links: checked in a separate program,
/// `courier-default-transport-check`, which links `Courier` and not `CourierNIO` (this test
/// bundle links both, so it cannot check it in-process).
@Suite struct DefaultTransportTests {
    @Test func aProgramWithoutCourierNIOUsesURLSession() async throws {
        let binary = try #require(Self.checkBinary(), "courier-default-transport-check was not built beside the tests")
        let process = try ChildProcess(path: binary.path, arguments: [], standardError: .null)
        // The output ends when the program exits (or closes it): only then wait for the exit.
        let output = await process.allOutput(within: 30)
        if output == nil { process.send(SIGKILL) }
        let printedText = String(decoding: try #require(output, "the check program did not exit"), as: UTF8.self)
        #expect(await process.termination(within: 30) == .exited(0))
        #expect(printedText.trimmingCharacters(in: .whitespacesAndNewlines) == "Courier.URLSessionTransport")
    }

    /// The check program, in the build products folder beside this test bundle (the test target
    /// depends on it, so `swift build --build-tests` builds it first).
    private static func checkBinary() -> URL? {
        builtExecutable(named: "courier-default-transport-check").url
    }
}
