/// A change of the machine's network path, as a ``NetworkMonitor`` reports it.
///
/// Compare with the static members (`event == .linkUp(interface: "eth0")`) or switch on ``kind``.
/// Which kinds arrive depends on the platform: Linux reports links, addresses and routes from
/// rtnetlink; Apple platforms report only ``Kind/pathSatisfied`` and ``Kind/pathUnsatisfied``
/// from `NWPathMonitor`.
public struct NetworkPathEvent: Sendable, Hashable, CustomStringConvertible {
    /// What changed. A struct of static members rather than an enum, so new kinds can be added
    /// without breaking a `switch` in client code.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case linkUp
            case linkDown
            case addressAdded
            case addressRemoved
            case routeAdded
            case routeRemoved
            case pathSatisfied
            case pathUnsatisfied
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// An interface became usable: administratively up and with a carrier (`IFF_UP` and
        /// `IFF_RUNNING` on Linux).
        public static let linkUp = Kind(.linkUp)
        /// An interface stopped being usable: taken down, lost its carrier, or was removed.
        public static let linkDown = Kind(.linkDown)
        /// An interface gained an IPv4 or IPv6 address.
        public static let addressAdded = Kind(.addressAdded)
        /// An interface lost an IPv4 or IPv6 address.
        public static let addressRemoved = Kind(.addressRemoved)
        /// A default route was added (other routes come and go with containers and are not reported).
        public static let routeAdded = Kind(.routeAdded)
        /// A default route was removed.
        public static let routeRemoved = Kind(.routeRemoved)
        /// The system's path became usable (Apple platforms: `NWPath.Status.satisfied`).
        public static let pathSatisfied = Kind(.pathSatisfied)
        /// The system's path stopped being usable (Apple platforms).
        public static let pathUnsatisfied = Kind(.pathUnsatisfied)

        /// The kind's name, such as `linkUp`.
        public var description: String { base.rawValue }
    }

    /// What changed.
    public let kind: Kind
    /// The interface concerned, such as `eth0`; `nil` for routes and path changes, which concern
    /// no single interface.
    public let interface: String?

    private init(kind: Kind, interface: String?) {
        self.kind = kind
        self.interface = interface
    }

    /// `interface` became usable.
    public static func linkUp(interface: String) -> NetworkPathEvent {
        NetworkPathEvent(kind: .linkUp, interface: interface)
    }

    /// `interface` stopped being usable.
    public static func linkDown(interface: String) -> NetworkPathEvent {
        NetworkPathEvent(kind: .linkDown, interface: interface)
    }

    /// `interface` gained an address.
    public static func addressAdded(interface: String) -> NetworkPathEvent {
        NetworkPathEvent(kind: .addressAdded, interface: interface)
    }

    /// `interface` lost an address.
    public static func addressRemoved(interface: String) -> NetworkPathEvent {
        NetworkPathEvent(kind: .addressRemoved, interface: interface)
    }

    /// A default route was added.
    public static let routeAdded = NetworkPathEvent(kind: .routeAdded, interface: nil)
    /// A default route was removed.
    public static let routeRemoved = NetworkPathEvent(kind: .routeRemoved, interface: nil)
    /// The path became usable.
    public static let pathSatisfied = NetworkPathEvent(kind: .pathSatisfied, interface: nil)
    /// The path stopped being usable.
    public static let pathUnsatisfied = NetworkPathEvent(kind: .pathUnsatisfied, interface: nil)

    /// Whether connectivity may have returned with this change, so waiting retries should run now:
    /// a link came up, a new address or a default route was added, or the path became usable.
    public var mayRestoreConnectivity: Bool {
        kind == .linkUp || kind == .addressAdded || kind == .routeAdded || kind == .pathSatisfied
    }

    /// The kind, with the interface in parentheses when there is one: `linkUp(eth0)`.
    public var description: String {
        interface.map { "\(kind)(\($0))" } ?? kind.description
    }
}
