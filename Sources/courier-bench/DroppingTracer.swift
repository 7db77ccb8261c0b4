import Foundation
import Tracing

/// A tracer whose spans keep what they are told, under a lock, as a real tracer's do, and are
/// dropped when they end, and whose instrument writes a `traceparent`: what Courier's tracing
/// costs a request, without an exporter's.
struct DroppingTracer: Tracer {
    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> DroppingSpan {
        DroppingSpan(context: context(), operationName: operationName)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext,
        into carrier: inout Carrier,
        using injector: Inject
    ) where Inject.Carrier == Carrier {
        injector.inject(
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            forKey: "traceparent",
            into: &carrier
        )
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier,
        into context: inout ServiceContext,
        using extractor: Extract
    ) where Extract.Carrier == Carrier {}
}

/// A span of ``DroppingTracer``.
///
/// `@unchecked Sendable`: `state` is read and written only under `lock`.
final class DroppingSpan: Tracing.Span, @unchecked Sendable {
    let context: ServiceContext
    private let lock = NSLock()
    private var state: (name: String, attributes: SpanAttributes, events: [SpanEvent], isRecording: Bool)

    init(context: ServiceContext, operationName: String) {
        self.context = context
        state = (operationName, [:], [], true)
    }

    var operationName: String {
        get { lock.withLock { state.name } }
        set { lock.withLock { state.name = newValue } }
    }
    var attributes: SpanAttributes {
        get { lock.withLock { state.attributes } }
        set { lock.withLock { state.attributes = newValue } }
    }
    var isRecording: Bool { lock.withLock { state.isRecording } }

    func setStatus(_ status: SpanStatus) {}
    func addEvent(_ event: SpanEvent) { lock.withLock { state.events.append(event) } }
    func addLink(_ link: SpanLink) {}
    func recordError<Instant: TracerInstant>(
        _ error: any Error,
        attributes: SpanAttributes,
        at instant: @autoclosure () -> Instant
    ) {}
    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        lock.withLock { state.isRecording = false }
    }
}
