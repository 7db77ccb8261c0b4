import Foundation

/// The serial queue `CourierObservability`'s monitors hear events on unless given their own.
///
/// One queue for all of them: a session tells the monitors that share a queue of each event in
/// one block (see `CompositeEventMonitor`), where a queue each cost a block, and often a thread
/// wake-up, per event per monitor.
@usableFromInline
enum ObservabilityQueue {
    @usableFromInline
    static let shared = DispatchQueue(label: "Courier.observability")
}
