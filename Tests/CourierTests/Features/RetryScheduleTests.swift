import Foundation
import Testing

@testable import Courier

@Suite struct RetryScheduleTests {
    private static func wait(
        _ id: UUID = UUID(),
        retryCount: Int = 0,
        origin: String? = "https://a.example:443",
        isServerDelay: Bool = false,
        due: Duration = .seconds(10)
    ) -> RetrySchedule.Wait {
        RetrySchedule.Wait(
            requestID: id,
            retryCount: retryCount,
            origin: origin,
            isServerDelay: isServerDelay,
            due: due
        )
    }

    @Test func aDelayIsCheckedAgainstTheDeadline() {
        let now = Duration.seconds(100)
        #expect(RetrySchedule.decide(delay: nil, now: now, deadline: nil) == .retryNow)
        #expect(RetrySchedule.decide(delay: 0, now: now, deadline: .seconds(100)) == .pastDeadline)
        #expect(RetrySchedule.decide(delay: 0, now: now, deadline: .seconds(101)) == .retryNow)
        #expect(
            RetrySchedule.decide(delay: 2.5, now: now, deadline: nil)
                == .wait(until: .milliseconds(102_500), seconds: 2.5)
        )
        #expect(
            RetrySchedule.decide(delay: 2.5, now: now, deadline: .seconds(103))
                == .wait(until: .milliseconds(102_500), seconds: 2.5)
        )
        #expect(
            RetrySchedule.decide(delay: 3, now: now, deadline: .seconds(103)) == .pastDeadline,
            "ends at the deadline"
        )
        #expect(RetrySchedule.decide(delay: 1, now: now, deadline: .seconds(50)) == .pastDeadline, "already past")
    }

    @Test func hostileDelaysNeitherTrapNorWaitForever() {
        #expect(RetrySchedule.decide(delay: .nan, now: .zero, deadline: nil) == .retryNow)
        #expect(RetrySchedule.decide(delay: -5, now: .zero, deadline: nil) == .retryNow)
        #expect(RetrySchedule.decide(delay: -.infinity, now: .zero, deadline: nil) == .retryNow)
        #expect(
            RetrySchedule.decide(delay: .infinity, now: .zero, deadline: nil)
                == .wait(until: .seconds(1_000_000_000), seconds: 1e9)
        )
        #expect(RetrySchedule.decide(delay: 1e300, now: .seconds(1), deadline: .seconds(60)) == .pastDeadline)
        // Monitors are told the delay as asked; one too small for a nanosecond still waits (for none).
        #expect(
            RetrySchedule.decide(delay: 1.001, now: .zero, deadline: nil)
                == .wait(until: .nanoseconds(1_000_999_999), seconds: 1.001)
        )
        #expect(RetrySchedule.decide(delay: 1e-12, now: .zero, deadline: nil) == .wait(until: .zero, seconds: 1e-12))
    }

    @Test func aTriggerReleasesWaitsOnItsOriginOrAllButNeverAServersDelay() {
        var schedule = RetrySchedule()
        let a = Self.wait(due: .seconds(30))
        let aSooner = Self.wait(due: .seconds(5))
        let b = Self.wait(origin: "https://b.example:443")
        let server = Self.wait(isServerDelay: true)
        let noOrigin = Self.wait(origin: nil)
        for wait in [a, aSooner, b, server, noOrigin] { schedule.add(wait) }
        #expect(schedule.release(for: .origin("https://c.example:443")).isEmpty)
        #expect(schedule.release(for: .origin("https://a.example:443")) == [aSooner, a], "earliest due first")
        #expect(schedule.count == 3)
        #expect(Set(schedule.release(for: .all).map(\.requestID)) == [b.requestID, noOrigin.requestID])
        #expect(schedule.waits.keys.elementsEqual([server.requestID]))
        #expect(schedule.release(for: .all).isEmpty)
    }

    @Test func theDueReleaseTakesOnlyTheWaitOfItsRetry() {
        var schedule = RetrySchedule()
        let id = UUID()
        schedule.add(Self.wait(id, retryCount: 1))
        #expect(schedule.releaseAtDue(id, retryCount: 0) == nil, "an earlier wait's delay ending")
        #expect(schedule.count == 1)
        #expect(schedule.releaseAtDue(id, retryCount: 1)?.retryCount == 1)
        #expect(schedule.releaseAtDue(id, retryCount: 1) == nil, "released once")
        schedule.add(Self.wait(id, retryCount: 2))
        schedule.add(Self.wait(id, retryCount: 3))
        #expect(schedule.count == 1, "a request waits once")
        #expect(schedule.remove(id)?.retryCount == 3)
        #expect(schedule.remove(id) == nil)
    }
}
