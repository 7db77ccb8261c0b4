import CourierTestSupport
import Foundation
import Testing

/// `Session()` picks its transport from what the program links: checked in a separate program,
/// `courier-default-transport-check`, which links `Courier` and not `CourierNIO` (this test
/// bundle links both, so it cannot check it in-process).
@Suite struct DefaultTransportTests {
    @Test func aProgramWithoutCourierNIOUsesURLSession() async throws {
        let binary = try #require(Self.checkBinary(), "courier-default-transport-check was not built beside the tests")
        let process = Process()
        process.executableURL = binary
        let output = Pipe()
        process.standardOutput = output
        try launch(process)
        let exited: Void? = await value(within: 30) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    process.waitUntilExit()
                    continuation.resume()
                }
            }
        }
        if exited == nil { process.terminate() }
        try #require(exited != nil, "the check program did not exit")
        let printed = String(decoding: readToEnd(output.fileHandleForReading), as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines) == "Courier.URLSessionTransport")
    }

    /// The check program, in the build products folder beside this test bundle (the test target
    /// depends on it, so `swift build --build-tests` builds it first).
    private static func checkBinary() -> URL? {
        builtExecutable(named: "courier-default-transport-check").url
    }
}
