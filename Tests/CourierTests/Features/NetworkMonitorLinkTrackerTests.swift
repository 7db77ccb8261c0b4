#if os(Linux)
import Testing

@testable import Courier

@Suite("NetworkMonitor: rtnetlink messages to path events")
struct NetworkMonitorLinkTrackerTests {
    @Test func linksReportOnlyChangesOfUsability() {
        var tracker = NetworkMonitor.LinkTracker()
        let sequence: [(NetworkMonitor.NetlinkMessage, [NetworkPathEvent])] = [
            (.link(index: 2, name: "eth0", isUp: true, isRunning: true), [.linkUp(interface: "eth0")]),
            // MTU, promiscuity, alias: the same usability again.
            (.link(index: 2, name: "eth0", isUp: true, isRunning: true), []),
            // Carrier lost while still administratively up.
            (.link(index: 2, name: "eth0", isUp: true, isRunning: false), [.linkDown(interface: "eth0")]),
            (.link(index: 2, name: nil, isUp: false, isRunning: false), []),
            (.link(index: 2, name: nil, isUp: true, isRunning: true), [.linkUp(interface: "eth0")]),
        ]
        for (message, expected) in sequence {
            let events = tracker.events(for: [message])
            #expect(events == expected, "\(message)")
        }
    }

    @Test func theFirstSightingOfAnInterfaceCounts() {
        var tracker = NetworkMonitor.LinkTracker()
        let events = tracker.events(for: [.link(index: 3, name: "veth1", isUp: true, isRunning: false)])
        #expect(events == [.linkDown(interface: "veth1")])
    }

    @Test func removedLinksGoDownUnlessAlreadyDown() {
        var tracker = NetworkMonitor.LinkTracker()
        _ = tracker.events(for: [
            .link(index: 2, name: "eth0", isUp: true, isRunning: true),
            .link(index: 3, name: "eth1", isUp: false, isRunning: false),
        ])
        let removed = tracker.events(for: [
            .linkRemoved(index: 2, name: nil),
            .linkRemoved(index: 3, name: "eth1"),
            .linkRemoved(index: 4, name: "eth2"),
        ])
        #expect(removed == [.linkDown(interface: "eth0"), .linkDown(interface: "eth2")])
        // Gone from the tracker: a new interface with the same index is a first sighting.
        let reused = tracker.events(for: [.link(index: 2, name: "wlan0", isUp: true, isRunning: true)])
        #expect(reused == [.linkUp(interface: "wlan0")])
    }

    @Test func addressesAreNamedByLinkThenLabelThenLookupThenIndex() {
        var tracker = NetworkMonitor.LinkTracker()
        _ = tracker.events(for: [.link(index: 2, name: "eth0", isUp: true, isRunning: true)])
        let events = tracker.events(
            for: [
                .address(isAdded: true, index: 2, label: "eth0:1"),
                .address(isAdded: true, index: 5, label: "br0"),
                .address(isAdded: false, index: 6, label: nil),
                .address(isAdded: true, index: 7, label: nil),
            ],
            interfaceName: { $0 == 6 ? "wg0" : nil }
        )
        #expect(
            events == [
                .addressAdded(interface: "eth0"),
                .addressAdded(interface: "br0"),
                .addressRemoved(interface: "wg0"),
                .addressAdded(interface: "#7"),
            ]
        )
    }

    @Test func onlyDefaultRoutesAreReported() {
        var tracker = NetworkMonitor.LinkTracker()
        let events = tracker.events(for: [
            .route(isAdded: true, isDefault: true), .route(isAdded: true, isDefault: false),
            .route(isAdded: false, isDefault: false), .route(isAdded: false, isDefault: true),
        ])
        #expect(events == [.routeAdded, .routeRemoved], "a container's subnet route is not connectivity")
    }

    @Test func knownAddressesAnnouncedAgainAreNotNews() {
        var tracker = NetworkMonitor.LinkTracker()
        let address: [UInt8] = [0xFE, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        let events = tracker.events(for: [
            .link(index: 2, name: "eth0", isUp: true, isRunning: true),
            .address(isAdded: true, index: 2, label: nil, address: address),
            .address(isAdded: true, index: 2, label: nil, address: address),  // an IPv6 lifetime refresh
            .address(isAdded: false, index: 2, label: nil, address: address),
            .address(isAdded: true, index: 2, label: nil, address: address),
        ])
        #expect(
            events == [
                .linkUp(interface: "eth0"), .addressAdded(interface: "eth0"), .addressRemoved(interface: "eth0"),
                .addressAdded(interface: "eth0"),
            ]
        )
    }
}
#endif
