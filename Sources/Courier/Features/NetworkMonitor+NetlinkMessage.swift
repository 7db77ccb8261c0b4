#if os(Linux)
extension NetworkMonitor {
    /// One rtnetlink notification the monitor cares about, decoded from the bytes of a netlink
    /// datagram by the pure function ``parse(_:)``.
    ///
    /// The kernel writes these messages, but the parser trusts no length in them: every header
    /// and attribute is checked against the bytes actually present, and whatever does not fit is
    /// dropped, so truncated or garbage input yields fewer messages, never a crash.
    ///
    /// Layouts (native byte order, each message and attribute padded to 4 bytes), from
    /// `linux/netlink.h`, `linux/rtnetlink.h`, `linux/if_link.h` and `linux/if_addr.h`, which Swift's
    /// `Glibc` module does not import:
    ///
    /// | struct      | bytes | fields used                                                   |
    /// |-------------|------:|---------------------------------------------------------------|
    /// | `nlmsghdr`  | 16    | `nlmsg_len` u32 @0, `nlmsg_type` u16 @4                        |
    /// | `ifinfomsg` | 16    | `ifi_index` i32 @4, `ifi_flags` u32 @8                         |
    /// | `ifaddrmsg` | 8     | `ifa_index` u32 @4                                             |
    /// | `rtmsg`     | 12    | `rtm_table` u8 @4                                              |
    /// | `rtattr`    | 4     | `rta_len` u16 @0 (header included), `rta_type` u16 @2          |
    enum NetlinkMessage: Equatable, Sendable {
        /// `RTM_NEWLINK`: an interface was added or changed (flags, carrier, name).
        case link(index: Int32, name: String?, isUp: Bool, isRunning: Bool)
        /// `RTM_DELLINK`: an interface was removed.
        case linkRemoved(index: Int32, name: String?)
        /// `RTM_NEWADDR` / `RTM_DELADDR`; `label` is `IFA_LABEL`, which only IPv4 addresses carry;
        /// `address` is `IFA_ADDRESS`, the address's bytes.
        case address(isAdded: Bool, index: Int32, label: String?, address: [UInt8]? = nil)
        /// `RTM_NEWROUTE` / `RTM_DELROUTE`; `isDefault` when `rtm_dst_len` is 0 (a default route).
        case route(isAdded: Bool, isDefault: Bool = false)

        /// The multicast groups to bind to: `RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE
        /// | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE`.
        static let multicastGroups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400

        private enum MessageType {
            static let newLink: UInt16 = 16
            static let deleteLink: UInt16 = 17
            static let newAddress: UInt16 = 20
            static let deleteAddress: UInt16 = 21
            static let newRoute: UInt16 = 24
            static let deleteRoute: UInt16 = 25
        }

        private enum Size {
            static let header = 16
            static let interfaceInfo = 16
            static let interfaceAddress = 8
            static let route = 12
            static let attributeHeader = 4
        }

        private static let interfaceUp: UInt32 = 0x1  // IFF_UP
        private static let interfaceRunning: UInt32 = 0x40  // IFF_RUNNING
        private static let linkNameAttribute: UInt16 = 3  // IFLA_IFNAME
        private static let addressLabelAttribute: UInt16 = 3  // IFA_LABEL
        private static let addressAttribute: UInt16 = 1  // IFA_ADDRESS
        /// The low bits of `rta_type` name the attribute; the top two are flags (`NLA_F_NESTED`,
        /// `NLA_F_NET_BYTEORDER`).
        private static let attributeTypeMask: UInt16 = 0x3FFF

        /// The messages in one datagram, in order. Other message types (`NLMSG_DONE`,
        /// `NLMSG_ERROR`, neighbour or rule changes) are skipped; parsing stops at the first header
        /// whose length is impossible, since nothing after it can be located.
        static func parse(_ bytes: UnsafeRawBufferPointer) -> [NetlinkMessage] {
            var messages: [NetlinkMessage] = []
            var offset = 0
            while bytes.count - offset >= Size.header {
                guard let rawLength = bytes.load(UInt32.self, at: offset),
                    let length = Int(exactly: rawLength),
                    length >= Size.header,
                    length <= bytes.count - offset,
                    let type = bytes.load(UInt16.self, at: offset + 4)
                else { break }
                let payload = UnsafeRawBufferPointer(
                    rebasing: bytes[(offset + Size.header)..<(offset + length)]
                )
                if let message = message(type: type, payload: payload) {
                    messages.append(message)
                }
                // The last message of a datagram may omit its padding.
                offset += min(aligned(length), bytes.count - offset)
            }
            return messages
        }

        private static func message(type: UInt16, payload: UnsafeRawBufferPointer) -> NetlinkMessage? {
            switch type {
            case MessageType.newLink, MessageType.deleteLink:
                guard payload.count >= Size.interfaceInfo,
                    let index = payload.load(Int32.self, at: 4),
                    let flags = payload.load(UInt32.self, at: 8)
                else { return nil }
                let name = attribute(linkNameAttribute, in: payload, after: Size.interfaceInfo).flatMap(string)
                if type == MessageType.deleteLink {
                    return .linkRemoved(index: index, name: name)
                }
                return .link(
                    index: index,
                    name: name,
                    isUp: flags & interfaceUp != 0,
                    isRunning: flags & interfaceRunning != 0
                )
            case MessageType.newAddress, MessageType.deleteAddress:
                guard payload.count >= Size.interfaceAddress,
                    let index = payload.load(UInt32.self, at: 4)
                else { return nil }
                let label = attribute(addressLabelAttribute, in: payload, after: Size.interfaceAddress)
                    .flatMap(string)
                let address = attribute(addressAttribute, in: payload, after: Size.interfaceAddress).map { Array($0) }
                return .address(
                    isAdded: type == MessageType.newAddress,
                    index: Int32(bitPattern: index),
                    label: label,
                    address: address
                )
            case MessageType.newRoute, MessageType.deleteRoute:
                guard payload.count >= Size.route else { return nil }
                // `rtmsg` starts with `rtm_family`, then `rtm_dst_len`: 0 for a default route.
                return .route(isAdded: type == MessageType.newRoute, isDefault: payload[1] == 0)
            default:
                return nil
            }
        }

        /// The value of the first attribute of `type` among those following the fixed header of
        /// `headerSize` bytes; `nil` if there is none or the attributes stop making sense first.
        private static func attribute(
            _ type: UInt16,
            in payload: UnsafeRawBufferPointer,
            after headerSize: Int
        ) -> UnsafeRawBufferPointer? {
            var offset = headerSize
            while payload.count - offset >= Size.attributeHeader {
                guard let rawLength = payload.load(UInt16.self, at: offset),
                    let attributeType = payload.load(UInt16.self, at: offset + 2)
                else { return nil }
                let length = Int(rawLength)
                guard length >= Size.attributeHeader, length <= payload.count - offset else { return nil }
                if attributeType & attributeTypeMask == type {
                    return UnsafeRawBufferPointer(
                        rebasing: payload[(offset + Size.attributeHeader)..<(offset + length)]
                    )
                }
                offset += min(aligned(length), payload.count - offset)
            }
            return nil
        }

        /// A C string attribute: the bytes up to the first NUL (or all of them), as UTF-8; `nil`
        /// when empty.
        private static func string(_ value: UnsafeRawBufferPointer) -> String? {
            let bytes = value.prefix { $0 != 0 }
            guard !bytes.isEmpty else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }

        private static func aligned(_ length: Int) -> Int {
            (length + 3) & ~3
        }
    }
}

extension UnsafeRawBufferPointer {
    /// The integer at `offset` in native byte order, or `nil` if it does not fit.
    fileprivate func load<Integer: FixedWidthInteger>(_: Integer.Type, at offset: Int) -> Integer? {
        guard offset >= 0, count - offset >= MemoryLayout<Integer>.size else { return nil }
        return loadUnaligned(fromByteOffset: offset, as: Integer.self)
    }
}
#endif
