/// Hand-built rtnetlink datagrams, laid out as `linux/netlink.h` and `linux/rtnetlink.h` define
/// them (native byte order, 4-byte padding), for the parser's tests.
enum NetlinkBytes {
    static let newLink: UInt16 = 16
    static let deleteLink: UInt16 = 17
    static let newAddress: UInt16 = 20
    static let deleteAddress: UInt16 = 21
    static let newRoute: UInt16 = 24
    static let deleteRoute: UInt16 = 25
    static let up: UInt32 = 0x1
    static let running: UInt32 = 0x40

    /// The bytes of `value` in native byte order.
    static func native<Integer: FixedWidthInteger>(_ value: Integer) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }
    }

    /// `bytes` followed by zeros up to a multiple of 4.
    static func padded(_ bytes: [UInt8]) -> [UInt8] {
        bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    /// An `nlmsghdr` and its payload; `padded: false` leaves off the trailing padding, as the
    /// last message of a datagram may.
    static func message(type: UInt16, payload: [UInt8], padded pad: Bool = true) -> [UInt8] {
        let header =
            native(UInt32(16 + payload.count)) + native(type) + native(UInt16(0)) + native(UInt32(1))
            + native(UInt32(0))
        let bytes = header + payload
        return pad ? padded(bytes) : bytes
    }

    /// An `rtattr` and its value, padded.
    static func attribute(type: UInt16, value: [UInt8]) -> [UInt8] {
        padded(native(UInt16(4 + value.count)) + native(type) + value)
    }

    /// A NUL-terminated C string.
    static func cString(_ string: String) -> [UInt8] {
        Array(string.utf8) + [0]
    }

    /// An `ifinfomsg` followed by `attributes`.
    static func link(
        type: UInt16 = newLink,
        index: Int32,
        flags: UInt32,
        name: String?,
        extraAttributes: [UInt8] = []
    ) -> [UInt8] {
        let info =
            [UInt8(0), 0] + native(UInt16(1)) + native(index) + native(flags) + native(UInt32(0xFFFF_FFFF))
        let nameAttribute = name.map { attribute(type: 3, value: cString($0)) } ?? []
        return message(type: type, payload: info + extraAttributes + nameAttribute)
    }

    /// An `ifaddrmsg` (IPv4 with a label, or IPv6 without) followed by its address.
    static func address(type: UInt16 = newAddress, index: UInt32, label: String?) -> [UInt8] {
        let family: UInt8 = label == nil ? 10 : 2
        let header = [family, 24, 0, 0] + native(index)
        let address = attribute(type: 1, value: label == nil ? [UInt8](repeating: 0xFE, count: 16) : [10, 0, 0, 1])
        let labelAttribute = label.map { attribute(type: 3, value: cString($0)) } ?? []
        return message(type: type, payload: header + address + labelAttribute)
    }

    /// An `rtmsg` for a route in the main table, with an output interface.
    static func route(type: UInt16 = newRoute) -> [UInt8] {
        let header: [UInt8] = [2, 24, 0, 0, 254, 3, 0, 1] + native(UInt32(0))
        return message(type: type, payload: header + attribute(type: 4, value: native(UInt32(2))))
    }
}
