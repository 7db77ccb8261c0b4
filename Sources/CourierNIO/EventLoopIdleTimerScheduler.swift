@_spi(CourierTransport) import Courier
import NIOCore

/// Sets an ``IdleWatch``'s timer on an event loop, where its checks, and the timeouts they find,
/// then run.
struct EventLoopIdleTimerScheduler: IdleTimerScheduler {
    let eventLoop: any EventLoop

    func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds }

    func schedule(at deadline: UInt64, _ fire: @escaping @Sendable () -> Void) -> IdleTimerCancellation? {
        let callback: NIOScheduledCallback
        do {
            callback = try eventLoop.scheduleCallback(at: .uptimeNanoseconds(deadline), handler: Tick(fire: fire))
        } catch {
            // The loop refused the timer (shut down, from its own thread).
            return nil
        }
        return IdleTimerCancellation { callback.cancel() }
    }

    private struct Tick: NIOScheduledCallbackHandler, Sendable {
        let fire: @Sendable () -> Void

        func handleScheduledCallback(eventLoop: some EventLoop) {
            fire()
        }
    }
}
