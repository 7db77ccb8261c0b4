import Foundation
import Testing

@testable import Courier

/// The custom task's state machine, with no I/O: the guarantees `CustomRequestDelegate` lists.
@Suite struct CustomOperationStateMachineTests {
    private typealias Machine = CustomOperationTask.StateMachine

    private static let ok = CustomOperationTask.Outcome.success(CustomResponse(statusCode: 200))

    private static func isStart(_ action: Machine.ResumeAction) -> Bool {
        if case .start = action { true } else { false }
    }

    private static func delivers(_ action: Machine.AnswerAction) -> Bool {
        if case .deliver = action { true } else { false }
    }

    private static func ignoreReason(_ action: Machine.AnswerAction) -> String? {
        if case .ignore(let reason) = action { reason } else { nil }
    }

    @Test func startsOnceHoweverOftenResumed() {
        var machine = Machine()
        #expect(Self.isStart(machine.resume()))
        #expect(!Self.isStart(machine.resume()))
        machine.suspend()
        #expect(!Self.isStart(machine.resume()))
    }

    @Test func theFirstAnswerWinsAndLaterOnesAreIgnored() {
        var machine = Machine()
        _ = machine.resume()
        #expect(!machine.willIgnore)
        #expect(Self.delivers(machine.answer(Self.ok)))
        #expect(machine.willIgnore)
        #expect(Self.ignoreReason(machine.answer(Self.ok)) == "the operation had answered already")
        #expect(machine.cancel() == .none)
    }

    @Test func nothingIsDeliveredAfterACancel() {
        var machine = Machine()
        _ = machine.resume()
        #expect(machine.cancel() == .complete(tellsDelegate: true))
        #expect(machine.willIgnore)
        #expect(Self.ignoreReason(machine.answer(Self.ok)) == "the request was cancelled")
        #expect(machine.cancel() == .none)
        #expect(!Self.isStart(machine.resume()))
    }

    @Test func aCancelBeforeTheStartNeverStartsNorTellsTheDelegate() {
        var machine = Machine()
        #expect(machine.cancel() == .complete(tellsDelegate: false))
        #expect(!Self.isStart(machine.resume()))
    }

    @Test func anAnswerWhileSuspendedWaitsForTheResume() {
        var machine = Machine()
        _ = machine.resume()
        machine.suspend()
        guard case .hold = machine.answer(Self.ok) else {
            Issue.record("an answer while suspended was not held")
            return
        }
        #expect(machine.willIgnore)
        #expect(Self.ignoreReason(machine.answer(Self.ok)) != nil)
        guard case .deliver = machine.resume() else {
            Issue.record("the resume did not deliver the held answer")
            return
        }
        #expect(machine.cancel() == .none)
    }

    @Test func aCancelDropsAHeldAnswerWithoutTellingTheDelegate() {
        var machine = Machine()
        _ = machine.resume()
        machine.suspend()
        _ = machine.answer(Self.ok)
        #expect(machine.cancel() == .complete(tellsDelegate: false))
        guard case .none = machine.resume() else {
            Issue.record("a cancelled task delivered on resume")
            return
        }
    }

    @Test func progressOnlyMovesForwardWithinZeroToOne() {
        var machine = Machine()
        #expect(machine.progressed(0.5) == nil, "no progress before the start")
        _ = machine.resume()
        let reported = [0.2, 0.1, -3, .nan, 0.2, 0.6, 0.4, 7, 0.9].map { machine.progressed($0) }
        #expect(reported == [0.2, nil, nil, nil, nil, 0.6, nil, 1, nil])
        _ = machine.answer(Self.ok)
        #expect(machine.progressed(1) == nil)
    }
}
