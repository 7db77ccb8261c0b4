import Testing

@testable import Courier

/// `Content-Range` headers a server chooses, as a resumed download reads them; the ordinary forms
/// are covered in `DownloadDestinationTests`.
@Suite struct ContentRangeTests {
    /// Found by `Fuzz/Sources/FuzzContentRange`: a sign, a negative complete length or a range
    /// outside the complete length was accepted, and the download trusted its numbers.
    @Test func numbersOutsideTheGrammarAreRefused() {
        for header in [
            "bytes 0-4/-235", "bytes 500-999/5", "bytes +5-9/10", "bytes 5-9/+10", "bytes 9-5/10",
            "bytes 0-9/10x", "bytes 5-/10", "bytes -5-9/10", "bytes 0-9/ 10", "bytes 0-10/10",
            "bytes 0-99999999999999999999/*",
        ] {
            #expect(ContentRange(header) == nil, "\(header)")
        }
    }

    @Test func validRangesStillRead() {
        #expect(ContentRange("bytes 0-0/1") == ContentRange(start: 0, completeLength: 1))
        #expect(ContentRange("Bytes 9-9/10") == ContentRange(start: 9, completeLength: 10))
        #expect(ContentRange("bytes 5-9/*") == ContentRange(start: 5, completeLength: nil))
        #expect(ContentRange("bytes  5-9/10 ") == ContentRange(start: 5, completeLength: 10))
    }
}
