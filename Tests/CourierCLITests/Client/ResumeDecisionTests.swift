import Foundation
import Testing

@testable import courier

@Suite struct ResumeDecisionTests {
    @Test func partialContentFromTheEndOfTheFileAppends() {
        #expect(
            ResumeDecision.decide(
                existingBytes: 100,
                statusCode: 206,
                contentRange: "bytes 100-199/200",
                contentLength: 100
            )
                == .append(offset: 100, total: 200)
        )
    }

    @Test func partialContentFromElsewhereIsRefused() {
        let decision = ResumeDecision.decide(
            existingBytes: 100,
            statusCode: 206,
            contentRange: "bytes 0-199/200",
            contentLength: 200
        )
        guard case .refuse = decision else {
            Issue.record("expected a refusal, got \(decision)")
            return
        }
    }

    @Test func wholeBodyStartsOver() {
        #expect(
            ResumeDecision.decide(existingBytes: 100, statusCode: 200, contentRange: nil, contentLength: 300)
                == .restart(total: 300)
        )
    }

    @Test func unsatisfiableRangeOfTheFileLengthMeansComplete() {
        #expect(
            ResumeDecision.decide(existingBytes: 200, statusCode: 416, contentRange: "bytes */200", contentLength: nil)
                == .alreadyComplete(total: 200)
        )
        guard
            case .refuse = ResumeDecision.decide(
                existingBytes: 300,
                statusCode: 416,
                contentRange: "bytes */200",
                contentLength: nil
            )
        else {
            Issue.record("a file longer than the body is not complete")
            return
        }
    }

    @Test func errorsAreRefused() {
        #expect(
            ResumeDecision.decide(existingBytes: 0, statusCode: 404, contentRange: nil, contentLength: nil)
                == .refuse("HTTP 404 Not Found")
        )
    }

    @Test func contentRangeValues() {
        let value = ContentRangeValue("bytes 1-2/3")
        #expect(value?.first == 1 && value?.last == 2 && value?.total == 3)
        #expect(ContentRangeValue("bytes 1-2/*")?.total == nil)
        #expect(ContentRangeValue("bytes */9")?.first == nil)
        #expect(ContentRangeValue("bytes */*") == nil)
        #expect(ContentRangeValue("bytes 5-2/9") == nil)
        #expect(ContentRangeValue("items 1-2/3") == nil)
    }

    @Test func downloadNamesFromTheURL() throws {
        let taken: Set<String> = ["file.bin", "file.bin-1"]
        let file = try #require(URL(string: "http://h/a/file.bin"))
        #expect(DownloadTarget.fileName(for: file) { taken.contains($0) } == "file.bin-2")
        #expect(DownloadTarget.fileName(for: try #require(URL(string: "http://h/"))) { _ in false } == "index")
        #expect(DownloadTarget.fileName(for: try #require(URL(string: "http://h/.."))) { _ in false } == "index")
    }
}
