import Foundation
import Testing

@testable import courier

/// `courier demo` runs every step, exits 0 and leaves nothing behind.
@Suite struct DemoCommandTests {
    @Test func runsEveryStepAndCleansUp() async throws {
        let temporary = try makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: temporary) }
        let run = try await CourierRun.run(["demo"], environment: ["TMPDIR": temporary.path], timeout: 60)
        #expect(run.status == 0, "\(run.errorOutput)")
        let headings = [
            "1. A GET decoded into a struct",
            "2. A validation failure, with its readable error",
            "3. A retry with backoff after two 503s",
            "4. A download with a progress bar, interrupted and resumed",
            "5. A multipart upload",
            "6. A JSON-lines stream",
            "7. The metrics of every attempt",
            "8. The same attempts recorded as HAR 1.2 (`courier --har FILE URL` records a run)",
        ]
        for heading in headings {
            #expect(run.output.contains("\n\(heading)\n"), "missing \(heading)")
        }
        #expect(run.output.contains("error.responseCode: 418"))
        #expect(run.output.components(separatedBy: "RetryPolicy waits").count == 3)
        #expect(run.output.contains("the bytes match the server's: yes"))
        #expect(run.output.contains("part \"notes\", notes.txt, text/plain: 1240 bytes"))
        #expect(run.output.contains("line 4: "))
        #expect(run.output.contains("3 entries (503, 503, 200); the last: GET "))
        #expect(!run.output.contains("\u{1B}["))  // not a terminal: plain text
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.path)
        #expect(left.isEmpty, "left behind: \(left)")
    }
}
