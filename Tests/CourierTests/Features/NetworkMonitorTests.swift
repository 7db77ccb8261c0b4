import CourierTestSupport
import Foundation
import Testing

@testable import Courier

@Suite("NetworkMonitor")
struct NetworkMonitorTests {
    @Test func eventsSayWhetherConnectivityMayHaveReturned() {
        #expect(NetworkPathEvent.linkUp(interface: "eth0").mayRestoreConnectivity)
        #expect(NetworkPathEvent.addressAdded(interface: "eth0").mayRestoreConnectivity)
        #expect(NetworkPathEvent.routeAdded.mayRestoreConnectivity)
        #expect(NetworkPathEvent.pathSatisfied.mayRestoreConnectivity)
        #expect(!NetworkPathEvent.linkDown(interface: "eth0").mayRestoreConnectivity)
        #expect(!NetworkPathEvent.addressRemoved(interface: "eth0").mayRestoreConnectivity)
        #expect(!NetworkPathEvent.routeRemoved.mayRestoreConnectivity)
        #expect(NetworkPathEvent.linkUp(interface: "eth0").description == "linkUp(eth0)")
        #expect(NetworkPathEvent.routeRemoved.description == "routeRemoved")
        #expect(NetworkPathEvent.linkUp(interface: "eth0").kind == .linkUp)
        #expect(NetworkPathEvent.linkUp(interface: "eth0").interface == "eth0")
    }

    @Test func runsOnlyWhileSomeoneListens() {
        let monitor = NetworkMonitor()
        #expect(!monitor.isRunning)
        let observation = monitor.observe { _ in }
        #expect(monitor.isRunning, "\(monitor.failure ?? "")")
        withExtendedLifetime(monitor.events()) {
            observation.cancel()
            #expect(monitor.isRunning)
        }
        // The stream was dropped, so nobody listens.
        #expect(!monitor.isRunning)
        let again = monitor.observe { _ in }
        #expect(monitor.isRunning)
        again.cancel()
        #expect(!monitor.isRunning)
    }

    @Test func stopFinishesStreamsForGood() async {
        let monitor = NetworkMonitor()
        let events = monitor.events()
        let observation = monitor.observe { _ in }
        #expect(monitor.isRunning)
        monitor.stop()
        #expect(!monitor.isRunning)
        let ended = await value(within: hangLimit) {
            for await _ in events {}
            return true
        }
        #expect(ended == true)
        observation.cancel()
        let later = await value(within: hangLimit) {
            for await _ in monitor.events() {}
            return true
        }
        #expect(later == true)
        _ = monitor.observe { _ in }
        #expect(!monitor.isRunning)
    }

    #if os(Linux)
    @Test func aMissingNamespaceStopsTheMonitor() async {
        let monitor = NetworkMonitor(networkNamespacePath: "/var/run/netns/courier-test-does-not-exist")
        let events = monitor.events()
        #expect(!monitor.isRunning)
        #expect(monitor.failure?.contains("courier-test-does-not-exist") == true)
        let ended = await value(within: hangLimit) {
            for await _ in events {}
            return true
        }
        #expect(ended == true)
    }

    @Test(
        .enabled(
            if: NetworkNamespace.canCreate,
            "`ip netns add` was refused: creating network namespaces needs root or CAP_SYS_ADMIN"
        )
    )
    func reportsLinksGoingUpAndDownInANetworkNamespace() async throws {
        let namespace = try NetworkNamespace.create()
        defer { namespace.delete() }
        try namespace.ip("link", "add", "veth0", "type", "veth", "peer", "name", "veth1")

        let monitor = NetworkMonitor(networkNamespacePath: namespace.path)
        defer { monitor.stop() }
        let events = monitor.events()
        try #require(monitor.isRunning, "\(monitor.failure ?? "")")
        // Each firing, with the network namespace of the thread the handler runs on.
        let (triggers, trigger) = AsyncStream.makeStream(of: (event: RetryTriggerEvent, namespace: String?).self)
        let observation = monitor.observe { event in
            trigger.yield(
                (event, try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self/ns/net"))
            )
        }
        defer { observation.cancel() }

        // A veth end has a carrier (IFF_RUNNING) only while both ends are up.
        try namespace.ip("link", "set", "veth1", "up")
        try namespace.ip("link", "set", "veth0", "up")
        #expect(await first(of: events) { $0 == .linkUp(interface: "veth0") } != nil)
        let fired = await first(of: triggers) { $0.event == .all }
        #expect(fired?.event == .all)
        // The reader entered the namespace only to create its socket: user code runs in the process's.
        let processNamespace = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")
        #expect(fired?.namespace == processNamespace)

        try namespace.ip("link", "set", "veth0", "down")
        #expect(await first(of: events) { $0 == .linkDown(interface: "veth0") } != nil)
        // Its peer lost the carrier with it.
        #expect(await first(of: events) { $0 == .linkDown(interface: "veth1") } != nil)

        try namespace.ip("link", "set", "veth0", "up")
        #expect(await first(of: events) { $0 == .linkUp(interface: "veth0") } != nil)
    }
    #endif

    /// The first element of `stream` that satisfies `predicate`, or `nil` if none comes within 30 s.
    private func first<Element: Sendable>(
        of stream: AsyncStream<Element>,
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async -> Element? {
        let found = await value(within: hangLimit) { () -> Element? in
            for await element in stream where predicate(element) {
                return element
            }
            return nil
        }
        return found ?? nil
    }
}
