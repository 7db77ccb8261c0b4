import Foundation

/// A point in a ``StubResponse`` where the stub waits for the test's signal: tasks that reach it
/// stop until ``open()`` is called.
///
/// Use it to put an attempt exactly where a test wants it: wait until a task has reached the
/// gate with ``waitForArrivals(_:)`` (everything scripted before the gate has then been
/// delivered), act (cancel, suspend), then ``open()`` the gate, or open it from another thread
/// at the same moment to race the two. One gate may stand in many responses; once open it stays
/// open, and tasks that reach it later pass straight through.
///
/// ```swift
/// let gate = StubGate()
/// transport.enqueue(StubResponse.status(200).wait(for: gate).body("done"))
/// let request = session.request("https://example.com/")
/// await gate.waitForArrivals()   // the head has been delivered; the body has not
/// request.cancel()
/// gate.open()
/// ```
public final class StubGate: Sendable {
    private struct State: Sendable {
        var isOpen = false
        /// Tasks waiting for the gate to open: each closure lets one continue.
        var waiting: [@Sendable () -> Void] = []
        var arrivals = 0
        /// Tests waiting for a number of arrivals.
        var arrivalWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    /// A closed gate.
    public init() {}

    /// Lets every task waiting at the gate continue, and every task that reaches it later pass.
    /// Calling it again does nothing.
    public func open() {
        let waiting = state.withLock { state -> [@Sendable () -> Void] in
            state.isOpen = true
            defer { state.waiting = [] }
            return state.waiting
        }
        // Outside the lock: continuing a task may deliver its next events.
        for resume in waiting { resume() }
    }

    /// Whether ``open()`` has been called.
    public var isOpen: Bool {
        state.withLock { $0.isOpen }
    }

    /// How many tasks have reached the gate so far (those that passed it open included).
    public var arrivals: Int {
        state.withLock { $0.arrivals }
    }

    /// Returns once at least `count` tasks have reached the gate.
    ///
    /// Everything a task's response scripts before the gate has been delivered to its handler by
    /// then. It does not end early when the calling task is cancelled, so bound it in time in a
    /// test that could otherwise hang (a script that never reaches the gate).
    ///
    /// - Parameter count: How many arrivals to wait for; 1 by default.
    public func waitForArrivals(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reached = state.withLock { state -> Bool in
                if state.arrivals >= count { return true }
                state.arrivalWaiters.append((count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }

    /// Records a task's arrival; `continueTask` runs once the gate is open (at once, on this
    /// thread, if it already is).
    func arrive(then continueTask: @escaping @Sendable () -> Void) {
        let (isOpen, reached) = state.withLock {
            state -> (Bool, [CheckedContinuation<Void, Never>]) in
            state.arrivals += 1
            let arrivals = state.arrivals
            let reached = state.arrivalWaiters.filter { $0.count <= arrivals }.map(\.continuation)
            state.arrivalWaiters.removeAll { $0.count <= arrivals }
            if !state.isOpen { state.waiting.append(continueTask) }
            return (state.isOpen, reached)
        }
        for continuation in reached { continuation.resume() }
        if isOpen { continueTask() }
    }
}
