import Testing

@testable import courier

@Suite struct ProgressBarTests {
    @Test func knownLengthShowsPercentBarSpeedAndETA() {
        let bar = ProgressBar(totalBytes: 4 * 1024 * 1024, style: .plain)
        let line = bar.render(bytes: 1024 * 1024, elapsed: 1)
        #expect(line.hasPrefix(" 25% "))
        #expect(line.contains(String(repeating: "█", count: 6) + String(repeating: "░", count: 18)))
        #expect(line.contains("1.0 MiB / 4.0 MiB"))
        #expect(line.contains("1.0 MiB/s"))
        #expect(line.hasSuffix("ETA 3s"))
    }

    @Test func unknownLengthShowsBytesAndSpeed() {
        let line = ProgressBar(totalBytes: nil, style: .plain).render(bytes: 2048, elapsed: 2)
        #expect(line == "2.0 KiB  1.0 KiB/s")
    }

    @Test func resumedBytesCountForPercentNotSpeed() {
        let bar = ProgressBar(initialBytes: 900, totalBytes: 1000, style: .plain)
        let line = bar.render(bytes: 950, elapsed: 1)
        #expect(line.hasPrefix(" 95% "))
        #expect(line.contains("50 B/s"))
        #expect(line.hasSuffix("ETA 1s"))
    }

    @Test func redrawsAtMostTenTimesASecond() {
        var bar = ProgressBar(totalBytes: 100, style: .plain)
        #expect(bar.frame(bytes: 1, elapsed: 0) != nil)
        #expect(bar.frame(bytes: 2, elapsed: 0.05) == nil)
        #expect(bar.frame(bytes: 3, elapsed: 0.099) == nil)
        #expect(bar.frame(bytes: 4, elapsed: 0.1) != nil)
        #expect(bar.frame(bytes: 5, elapsed: 0.15) == nil)
        #expect(bar.frame(bytes: 6, elapsed: 0.25) != nil)
    }

    @Test func colouredBarOnATerminal() {
        let line = ProgressBar(totalBytes: 10, style: .colored).render(bytes: 10, elapsed: 1)
        #expect(line.hasPrefix("100% \u{1B}[1;32m" + String(repeating: "█", count: ProgressBar.barWidth)))
        #expect(!line.contains("ETA"))
    }

    @Test func summaryNamesFileSizeAndResumedPart() {
        let summary = ProgressBar.summary(bytes: 2048, transferred: 1024, elapsed: 0.5, path: "f.bin")
        #expect(summary == "Saved f.bin: 2.0 KiB (1.0 KiB this time) in 0.50 s, 2.0 KiB/s")
    }

    @Test(arguments: [(Int64(0), "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"), (5 << 30, "5.0 GiB")])
    func byteCounts(bytes: Int64, expected: String) {
        #expect(ByteCount.format(bytes) == expected)
    }

    @Test func durations() {
        #expect(ByteCount.duration(0.2) == "1s")
        #expect(ByteCount.duration(65) == "1m05s")
        #expect(ByteCount.duration(7500) == "2h05m")
    }
}
