import Foundation

extension DispatchQueue {
    /// Runs `work` on this queue after `delay` seconds: Alamofire's `after(_:execute:)`.
    ///
    /// A delay that is negative or not a number runs `work` at once (asynchronously); one beyond
    /// a year (infinity included) is a year, so no number traps.
    public func after(_ delay: TimeInterval, execute work: @escaping @Sendable () -> Void) {
        let seconds = delay.isNaN ? 0 : min(max(delay, 0), 365 * 24 * 3600)
        // Whole milliseconds fit an `Int` on every platform (32-bit watchOS too) for a year.
        asyncAfter(deadline: .now() + .milliseconds(Int(seconds * 1000)), execute: work)
    }
}
