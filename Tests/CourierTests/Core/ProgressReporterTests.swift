import CourierTestSupport
import Foundation
import Testing

@testable import Courier

@Suite struct ProgressReporterTests {
    private static let millisecond: UInt64 = 1_000_000

    /// `shouldReport` as a plain function, since `#expect` cannot call a mutating method.
    private func report(
        _ reporter: inout ProgressReporter,
        completed: Int64,
        total: Int64,
        nanoseconds: UInt64,
        isFinal: Bool
    ) -> Bool {
        reporter.shouldReport(completed: completed, total: total, nanoseconds: nanoseconds, isFinal: isFinal)
    }

    private func listening() -> ProgressReporter {
        var reporter = ProgressReporter()
        reporter.handler = (DispatchQueue.global(), { _ in })
        return reporter
    }

    @Test func nobodyListeningMeansNoReport() {
        var reporter = ProgressReporter()
        #expect(!report(&reporter, completed: 10, total: 100, nanoseconds: 0, isFinal: true))
    }

    @Test func theFirstUpdateGoesThroughThenOnePercentSteps() {
        var reporter = listening()
        #expect(report(&reporter, completed: 1, total: 100_000, nanoseconds: 0, isFinal: false))
        #expect(!report(&reporter, completed: 500, total: 100_000, nanoseconds: Self.millisecond, isFinal: false))
        #expect(report(&reporter, completed: 1_001, total: 100_000, nanoseconds: 2 * Self.millisecond, isFinal: false))
        #expect(!report(&reporter, completed: 1_500, total: 100_000, nanoseconds: 3 * Self.millisecond, isFinal: false))
    }

    @Test func timePassingLetsAnUpdateThrough() {
        var reporter = listening()
        #expect(report(&reporter, completed: 1, total: -1, nanoseconds: 0, isFinal: false))
        #expect(!report(&reporter, completed: 2, total: -1, nanoseconds: 49 * Self.millisecond, isFinal: false))
        #expect(report(&reporter, completed: 3, total: -1, nanoseconds: 50 * Self.millisecond, isFinal: false))
    }

    @Test func theFinalUpdateAlwaysGoesThrough() {
        var reporter = listening()
        #expect(report(&reporter, completed: 1, total: 100, nanoseconds: 0, isFinal: false))
        #expect(report(&reporter, completed: 1, total: 100, nanoseconds: 1, isFinal: true))
    }

    @Test func resetStartsOver() {
        var reporter = listening()
        #expect(report(&reporter, completed: 50, total: 100, nanoseconds: 0, isFinal: false))
        reporter.reset()
        #expect(report(&reporter, completed: 1, total: 100, nanoseconds: 1, isFinal: false))
    }

    @Test func aMillionChunksGiveAFewHundredUpdates() async {
        await cpuBound {
            var reporter = listening()
            let total: Int64 = 1 << 30
            var reports = 0
            // 1 GiB in 1 KiB pieces over one second.
            for piece in 1...1_048_576 {
                let now = UInt64(piece) * 1_000_000_000 / 1_048_576
                if reporter.shouldReport(completed: Int64(piece) << 10, total: total, nanoseconds: now, isFinal: false)
                {
                    reports += 1
                }
            }
            #expect(reports >= 100 && reports <= 121, "\(reports)")
        }
    }
}
