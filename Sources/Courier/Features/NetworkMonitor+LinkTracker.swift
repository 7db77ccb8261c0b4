#if os(Linux)
extension NetworkMonitor {
    /// Turns rtnetlink messages into ``NetworkPathEvent``s: a value with no I/O, no lock and no
    /// clock, fed by the reader thread and unit-tested with hand-built messages.
    ///
    /// The kernel sends `RTM_NEWLINK` for every change of an interface (flags, carrier, MTU,
    /// statistics), so the tracker remembers whether each interface was last seen usable and
    /// reports ``NetworkPathEvent/Kind/linkUp`` and ``NetworkPathEvent/Kind/linkDown`` only when
    /// that changes (the first sighting of an interface counts as a change). It also remembers the
    /// interface names, since address messages carry only an index (IPv6 ones carry no label).
    ///
    /// The kernel also repeats `RTM_NEWADDR` for addresses it already has (IPv6 lifetimes are
    /// refreshed constantly) and adds routes as containers come and go; reporting those would fire
    /// the retry trigger all the time. So an address is reported only when it is new, and a route
    /// only when it is a default route.
    struct LinkTracker {
        private struct Link {
            var name: String
            var isUsable: Bool
        }

        /// What the tracker knows of each interface, by index.
        private var links: [Int32: Link] = [:]
        /// The addresses seen, by interface index and bytes.
        private var addresses: Set<AddressKey> = []

        private struct AddressKey: Hashable {
            let index: Int32
            let bytes: [UInt8]
        }

        /// The events `messages` amount to, in order. `interfaceName` names an interface the
        /// tracker has not seen a link message for (the reader passes `if_indextoname`); when it
        /// cannot either, the event names the interface by its index, as `#3`.
        mutating func events(
            for messages: [NetlinkMessage],
            interfaceName: (Int32) -> String? = { _ in nil }
        ) -> [NetworkPathEvent] {
            var events: [NetworkPathEvent] = []
            for message in messages {
                switch message {
                case .link(let index, let name, let isUp, let isRunning):
                    let name = name ?? links[index]?.name ?? interfaceName(index) ?? "#\(index)"
                    let isUsable = isUp && isRunning
                    let wasUsable = links[index]?.isUsable
                    links[index] = Link(name: name, isUsable: isUsable)
                    if wasUsable != isUsable {
                        events.append(isUsable ? .linkUp(interface: name) : .linkDown(interface: name))
                    }
                case .linkRemoved(let index, let name):
                    let known = links.removeValue(forKey: index)
                    let name = name ?? known?.name ?? "#\(index)"
                    if known?.isUsable != false {
                        events.append(.linkDown(interface: name))
                    }
                case .address(let isAdded, let index, let label, let address):
                    if let address {
                        let key = AddressKey(index: index, bytes: address)
                        let isChange = isAdded ? addresses.insert(key).inserted : addresses.remove(key) != nil
                        // A known address announced again is not news; a removal always is.
                        guard isChange || !isAdded else { continue }
                    }
                    // An IPv4 label may be an alias such as `eth0:1`; the link's name is what
                    // link events use, so prefer it.
                    let name = links[index]?.name ?? label ?? interfaceName(index) ?? "#\(index)"
                    events.append(isAdded ? .addressAdded(interface: name) : .addressRemoved(interface: name))
                case .route(let isAdded, let isDefault):
                    guard isDefault else { continue }
                    events.append(isAdded ? .routeAdded : .routeRemoved)
                }
            }
            return events
        }
    }
}
#endif
