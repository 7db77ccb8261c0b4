import Testing

@testable import Courier

@Suite("NetworkMonitor: lifetime state machine")
struct NetworkMonitorStateMachineTests {
    typealias Machine = NetworkMonitor.StateMachine<String, String>

    @Test func theFirstSubscriberStartsTheSourceAndTheLastStopsIt() {
        var machine = Machine()
        #expect(!machine.isRunning)
        let first = machine.subscribe(id: 1, "a")
        #expect(first == .addedStartSource(generation: 1))
        #expect(machine.isRunning)
        let second = machine.subscribe(id: 2, "b")
        #expect(second == .added)
        let started = machine.sourceStarted("reader 1", generation: 1)
        #expect(started)
        #expect(machine.subscribers(forGeneration: 1).sorted() == ["a", "b"])
        let afterFirstLeft = machine.unsubscribe(id: 1)
        let afterUnknownLeft = machine.unsubscribe(id: 9)
        let afterLastLeft = machine.unsubscribe(id: 2)
        let afterLastLeftAgain = machine.unsubscribe(id: 2)
        #expect(afterFirstLeft == nil)
        #expect(afterUnknownLeft == nil)
        #expect(afterLastLeft == "reader 1")
        #expect(afterLastLeftAgain == nil)
        #expect(!machine.isRunning)
    }

    @Test func aLaterSubscriberStartsANewGenerationAndTheOldOneIsStale() {
        var machine = Machine()
        _ = machine.subscribe(id: 1, "a")
        _ = machine.sourceStarted("reader 1", generation: 1)
        _ = machine.unsubscribe(id: 1)
        let subscribed = machine.subscribe(id: 2, "b")
        #expect(subscribed == .addedStartSource(generation: 2))
        let lateStarted = machine.sourceStarted("late reader 1", generation: 1)
        let started = machine.sourceStarted("reader 2", generation: 2)
        #expect(!lateStarted)
        #expect(started)
        #expect(machine.subscribers(forGeneration: 1).isEmpty)
        let staleFailure = machine.sourceFailed(generation: 1)
        #expect(staleFailure == nil)
        #expect(machine.subscribers(forGeneration: 2) == ["b"])
        #expect(machine.isRunning)
    }

    @Test func aSourceNobodyWantsAnyMoreIsStopped() {
        var machine = Machine()
        _ = machine.subscribe(id: 1, "a")
        let source = machine.unsubscribe(id: 1)
        let started = machine.sourceStarted("reader 1", generation: 1)
        #expect(source == nil)
        #expect(!started)
        #expect(!machine.isRunning)
    }

    @Test func stopEndsEverySubscriberForGood() {
        var machine = Machine()
        _ = machine.subscribe(id: 1, "a")
        _ = machine.subscribe(id: 2, "b")
        _ = machine.sourceStarted("reader 1", generation: 1)
        let (source, subscribers) = machine.stop()
        #expect(source == "reader 1")
        #expect(subscribers.sorted() == ["a", "b"])
        #expect(!machine.isRunning)
        let refused = machine.subscribe(id: 3, "c")
        let unsubscribed = machine.unsubscribe(id: 1)
        let again = machine.stop()
        #expect(refused == .refused)
        #expect(unsubscribed == nil)
        #expect(again.source == nil && again.subscribers.isEmpty)
    }

    @Test func stopWhileStartingLeavesTheStarterToStopItsSource() {
        var machine = Machine()
        _ = machine.subscribe(id: 1, "a")
        let (source, subscribers) = machine.stop()
        let started = machine.sourceStarted("reader 1", generation: 1)
        #expect(source == nil)
        #expect(subscribers == ["a"])
        #expect(!started)
    }

    @Test func aFailedSourceStopsTheMonitor() {
        var machine = Machine()
        _ = machine.subscribe(id: 1, "a")
        let ended = machine.sourceFailed(generation: 1)
        let refused = machine.subscribe(id: 2, "b")
        let failedAgain = machine.sourceFailed(generation: 1)
        #expect(ended == ["a"])
        #expect(!machine.isRunning)
        #expect(refused == .refused)
        #expect(failedAgain == nil)
    }
}
