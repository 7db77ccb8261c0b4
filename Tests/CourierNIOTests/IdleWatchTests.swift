@_spi(CourierTransport) import Courier
@_spi(CourierTransport) import CourierTestSupport
import NIOPosix
import Testing

@testable import CourierNIO

/// The one timer that times out a transport's idle attempts, on a real event loop. (Its schedule,
/// and the watch on libdispatch, are tested in CourierTests.)
@Suite struct IdleWatchTests {
    @Test func onAnEventLoopEachAttemptIsCheckedWhenDueUntilItNeedsNoMore() async {
        let scheduler = EventLoopIdleTimerScheduler(eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        let problems = await IdleWatchRound.problems(with: scheduler)
        #expect(problems.isEmpty, "\(problems)")
    }
}
