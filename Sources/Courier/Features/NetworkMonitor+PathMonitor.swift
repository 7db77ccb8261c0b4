#if !os(Linux) && canImport(Network)
import Dispatch
import Network

extension NetworkMonitor {
    /// The Apple-platform source of a ``NetworkMonitor``: an `NWPathMonitor`, reporting when the
    /// system's path becomes usable (`.satisfied`) or stops being usable.
    ///
    /// The path the monitor reports first is the starting point, not a change, so it yields no
    /// event.
    // @unchecked Sendable: `monitor` is only started and cancelled, which `NWPathMonitor` allows from
    // any thread; the last status seen sits behind one lock.
    final class PathMonitor: @unchecked Sendable {
        private let monitor = NWPathMonitor()

        /// Starts watching; `deliver` is called on a private serial queue.
        init(deliver: @escaping @Sendable (_ events: [NetworkPathEvent], _ mayRestoreConnectivity: Bool) -> Void) {
            let lastStatus = Protected<NWPath.Status?>(nil)
            monitor.pathUpdateHandler = { path in
                let status = path.status
                let previous = lastStatus.withLock { last in
                    defer { last = status }
                    return last
                }
                guard let previous, previous != status else { return }
                if status == .satisfied {
                    deliver([.pathSatisfied], true)
                } else if previous == .satisfied {
                    deliver([.pathUnsatisfied], false)
                }
            }
            monitor.start(queue: DispatchQueue(label: "Courier.NetworkMonitor"))
        }

        /// Stops watching; no call follows once the monitor's queue has drained.
        func stop() {
            monitor.cancel()
        }
    }
}
#endif
