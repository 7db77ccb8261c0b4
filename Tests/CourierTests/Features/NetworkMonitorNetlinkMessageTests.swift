#if os(Linux)
import Testing

@testable import Courier

@Suite("NetworkMonitor: parsing rtnetlink datagrams")
struct NetworkMonitorNetlinkMessageTests {
    typealias Message = NetworkMonitor.NetlinkMessage

    private func parse(_ bytes: [UInt8]) -> [Message] {
        bytes.withUnsafeBytes { Message.parse($0) }
    }

    @Test func linkMessagesCarryIndexNameAndFlags() {
        let mtu = NetlinkBytes.attribute(type: 4, value: NetlinkBytes.native(UInt32(1500)))
        let hardwareAddress = NetlinkBytes.attribute(type: 1, value: [2, 0, 0, 0, 0, 1])
        let bytes =
            NetlinkBytes.link(index: 2, flags: NetlinkBytes.up | NetlinkBytes.running, name: "eth0")
            + NetlinkBytes.link(index: 3, flags: NetlinkBytes.up, name: "veth0", extraAttributes: mtu + hardwareAddress)
            + NetlinkBytes.link(index: 4, flags: 0, name: nil)
            + NetlinkBytes.link(type: NetlinkBytes.deleteLink, index: 3, flags: 0, name: "veth0")
        #expect(
            parse(bytes) == [
                .link(index: 2, name: "eth0", isUp: true, isRunning: true),
                .link(index: 3, name: "veth0", isUp: true, isRunning: false),
                .link(index: 4, name: nil, isUp: false, isRunning: false),
                .linkRemoved(index: 3, name: "veth0"),
            ]
        )
    }

    @Test func addressAndRouteMessages() {
        let bytes =
            NetlinkBytes.address(index: 2, label: "eth0")
            + NetlinkBytes.address(index: 5, label: nil)
            + NetlinkBytes.address(type: NetlinkBytes.deleteAddress, index: 2, label: "eth0:1")
            + NetlinkBytes.route()
            + NetlinkBytes.route(type: NetlinkBytes.deleteRoute)
        #expect(
            parse(bytes) == [
                .address(isAdded: true, index: 2, label: "eth0", address: [10, 0, 0, 1]),
                .address(isAdded: true, index: 5, label: nil, address: [UInt8](repeating: 0xFE, count: 16)),
                .address(isAdded: false, index: 2, label: "eth0:1", address: [10, 0, 0, 1]),
                .route(isAdded: true),
                .route(isAdded: false),
            ]
        )
    }

    @Test func otherMessageTypesAreSkipped() {
        let done = NetlinkBytes.message(type: 3, payload: NetlinkBytes.native(Int32(0)))
        let error = NetlinkBytes.message(type: 2, payload: [UInt8](repeating: 0, count: 20))
        let neighbour = NetlinkBytes.message(type: 28, payload: [UInt8](repeating: 7, count: 12))
        let bytes = done + NetlinkBytes.route() + error + neighbour + NetlinkBytes.route()
        #expect(parse(bytes) == [.route(isAdded: true), .route(isAdded: true)])
    }

    @Test func theLastMessageMayOmitItsPadding() {
        let info =
            [UInt8(0), 0, 1, 0] + NetlinkBytes.native(Int32(9)) + NetlinkBytes.native(NetlinkBytes.up)
            + NetlinkBytes.native(UInt32(0))
        // "lo" + NUL: a 7-byte attribute, so the message ends 1 byte short of a multiple of 4.
        let name = NetlinkBytes.native(UInt16(7)) + NetlinkBytes.native(UInt16(3)) + [0x6C, 0x6F, 0]
        let bytes = NetlinkBytes.route() + NetlinkBytes.message(type: 16, payload: info + name, padded: false)
        #expect(bytes.count % 4 != 0)
        #expect(parse(bytes) == [.route(isAdded: true), .link(index: 9, name: "lo", isUp: true, isRunning: false)])
    }

    @Test func namesNeedNoTerminatorAndEmptyNamesAreNil() {
        let info =
            [UInt8](repeating: 0, count: 4) + NetlinkBytes.native(Int32(1)) + NetlinkBytes.native(UInt32(0))
            + NetlinkBytes.native(UInt32(0))
        let unterminated = NetlinkBytes.attribute(type: 3, value: Array("wlan0".utf8))
        let empty = NetlinkBytes.attribute(type: 3, value: [0])
        #expect(
            parse(
                NetlinkBytes.message(type: 16, payload: info + unterminated)
                    + NetlinkBytes.message(type: 16, payload: info + empty)
            )
                == [
                    .link(index: 1, name: "wlan0", isUp: false, isRunning: false),
                    .link(index: 1, name: nil, isUp: false, isRunning: false),
                ]
        )
    }

    @Test func impossibleHeaderLengthsEndTheDatagram() {
        let route = NetlinkBytes.route()
        // Shorter than a header, or longer than the rest of the datagram.
        for length: UInt32 in [0, 1, 15, UInt32(2 * route.count) + 1, 0x7FFF_FFFF, 0xFFFF_FFFF] {
            var lying = route
            lying.replaceSubrange(0..<4, with: NetlinkBytes.native(length))
            #expect(parse(route + lying + route) == [.route(isAdded: true)], "nlmsg_len \(length)")
        }
    }

    @Test func shortPayloadsAreSkipped() {
        let bytes =
            NetlinkBytes.message(type: 16, payload: [UInt8](repeating: 0xFF, count: 15))
            + NetlinkBytes.message(type: 20, payload: [1, 2, 3])
            + NetlinkBytes.message(type: 24, payload: [])
            + NetlinkBytes.route()
        #expect(parse(bytes) == [.route(isAdded: true)])
    }

    @Test func brokenAttributesLoseTheNameNotTheMessage() {
        for badLength: UInt16 in [0, 3, 200, 0xFFFF] {
            let attribute =
                NetlinkBytes.native(badLength) + NetlinkBytes.native(UInt16(3)) + Array("eth0".utf8) + [0, 0, 0, 0]
            let info =
                [UInt8](repeating: 0, count: 4) + NetlinkBytes.native(Int32(2))
                + NetlinkBytes.native(NetlinkBytes.up | NetlinkBytes.running) + NetlinkBytes.native(UInt32(0))
            #expect(
                parse(NetlinkBytes.message(type: 16, payload: info + attribute))
                    == [.link(index: 2, name: nil, isUp: true, isRunning: true)],
                "rta_len \(badLength)"
            )
        }
    }

    @Test func everyTruncationParsesAPrefixOfTheMessages() {
        let messages = [
            NetlinkBytes.link(index: 2, flags: NetlinkBytes.up | NetlinkBytes.running, name: "eth0"),
            NetlinkBytes.address(index: 2, label: "eth0"),
            NetlinkBytes.route(),
        ]
        let bytes = messages.flatMap { $0 }
        let full = parse(bytes)
        #expect(full.count == 3)
        for count in 0...bytes.count {
            let parsed = parse(Array(bytes.prefix(count)))
            #expect(Array(full.prefix(parsed.count)) == parsed, "first \(count) bytes")
        }
        #expect(parse(Array(bytes.prefix(messages[0].count + messages[1].count))).count == 2)
    }

    @Test func garbageNeverCrashes() {
        var random = SplitMix64(seed: 0xC0FFEE)
        let valid =
            NetlinkBytes.link(index: 2, flags: NetlinkBytes.up | NetlinkBytes.running, name: "eth0")
            + NetlinkBytes.address(index: 2, label: nil) + NetlinkBytes.route()
        var decoded = 0
        for round in 0..<5_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                bytes = valid
                for _ in 0..<(1 + random.next() % 8) {
                    bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
                }
                bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1))))
            }
            decoded += parse(bytes).count
        }
        #expect(decoded > 0)
    }
}

/// A small deterministic generator, so a failing garbage input can be reproduced.
private struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
#endif
