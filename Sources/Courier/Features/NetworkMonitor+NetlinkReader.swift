#if os(Linux)
import Foundation
import Glibc

extension NetworkMonitor {
    /// Listens to rtnetlink notifications on a thread of its own: the Linux source of a
    /// ``NetworkMonitor``.
    ///
    /// The thread blocks in `poll` on two descriptors, the `AF_NETLINK` socket and one end of a
    /// socket pair that ``stop()`` writes to, so it neither spins nor outlives a stop by more than a
    /// wake-up. It owns every descriptor it uses and closes them as it exits.
    ///
    /// With a network namespace path, the thread enters that namespace (`setns`) only to create
    /// the socket, which stays bound to the namespace it was created in, and returns to the
    /// process's namespace before anything else runs on it; no other thread ever changes
    /// namespace.
    final class NetlinkReader: Sendable {
        /// Why a reader could not start, or stopped by itself.
        struct Failure: Error, CustomStringConvertible {
            /// The call that failed, such as `socket(AF_NETLINK)`.
            let operation: String
            /// Its `errno`, or 0 when there is none.
            let code: Int32

            var description: String {
                code == 0 ? operation : "\(operation): \(String(cString: strerror(code))) (errno \(code))"
            }
        }

        /// Called on the reader thread with the events of one datagram; `mayRestoreConnectivity`
        /// is also true when the kernel dropped notifications (`ENOBUFS`), since a lost one may
        /// have said that.
        typealias Deliver = @Sendable (_ events: [NetworkPathEvent], _ mayRestoreConnectivity: Bool) -> Void

        /// The one mutable part, behind the lock: whether ``stop()`` was called, and the wake
        /// descriptor to write to while the thread still owns it.
        private struct Control {
            var isStopped = false
            var wakeDescriptor: Int32?
        }

        private let control: Protected<Control>

        private init(wakeDescriptor: Int32) {
            control = Protected(Control(wakeDescriptor: wakeDescriptor))
        }

        private static let cloneNewNetwork: Int32 = 0x4000_0000  // CLONE_NEWNET
        private static let netlinkRoute: Int32 = 0  // NETLINK_ROUTE
        private static let receiveBufferSize = 64 * 1024

        /// Starts a reader thread and returns once its socket listens, so no change made after the
        /// call returns is missed.
        ///
        /// - Parameters:
        ///   - namespacePath: A network namespace file (`/var/run/netns/NAME`) to watch instead of
        ///     the process's own namespace.
        ///   - deliver: Called with each datagram's events.
        ///   - failed: Called once if the thread ends by itself (the socket failed).
        /// - Throws: ``Failure`` when the namespace cannot be entered or the socket not created.
        static func start(
            namespacePath: String?,
            deliver: @escaping Deliver,
            failed: @escaping @Sendable (Failure) -> Void
        ) throws -> NetlinkReader {
            var wake: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &wake) == 0 else {
                throw Failure(operation: "socketpair", code: errno)
            }
            let (wakeReceiver, wakeSender) = (wake[0], wake[1])
            let reader = NetlinkReader(wakeDescriptor: wakeSender)
            let opened = Protected<Result<Int32, Failure>?>(nil)
            let ready = DispatchSemaphore(value: 0)
            let thread = Thread {
                let result = openSocket(namespacePath: namespacePath)
                opened.withLock { $0 = result }
                ready.signal()
                guard case .success(let socket) = result else {
                    reader.closeWakeDescriptors(receiver: wakeReceiver)
                    return
                }
                let failure = reader.run(
                    socket: socket,
                    wakeReceiver: wakeReceiver,
                    namesInterfaces: namespacePath == nil,
                    deliver: deliver
                )
                close(socket)
                reader.closeWakeDescriptors(receiver: wakeReceiver)
                if let failure {
                    failed(failure)
                }
            }
            thread.name = "Courier.NetworkMonitor"
            thread.start()
            ready.wait()
            switch opened.withLock({ $0 }) {
            case .success:
                return reader
            case .failure(let failure):
                throw failure
            case nil:
                throw Failure(operation: "reader thread", code: 0)
            }
        }

        /// Ends the reader thread; it exits at its next wake-up, at once if it is waiting. Calling
        /// it again, or from the reader thread itself, is fine.
        func stop() {
            control.withLock { control in
                control.isStopped = true
                if let descriptor = control.wakeDescriptor {
                    var byte: UInt8 = 1
                    _ = send(descriptor, &byte, 1, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
            }
        }

        private func closeWakeDescriptors(receiver: Int32) {
            close(receiver)
            control.withLock { control in
                if let descriptor = control.wakeDescriptor {
                    close(descriptor)
                }
                control.wakeDescriptor = nil
            }
        }

        /// Reads until stopped; returns why it ended by itself, or `nil` when stopped.
        private func run(
            socket: Int32,
            wakeReceiver: Int32,
            namesInterfaces: Bool,
            deliver: Deliver
        ) -> Failure? {
            var tracker = LinkTracker()
            var buffer = [UInt8](repeating: 0, count: Self.receiveBufferSize)
            var descriptors = [
                pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeReceiver, events: Int16(POLLIN), revents: 0),
            ]
            // In another namespace the thread is back in the process's, where an index names a
            // different interface, so only names from link messages are used there.
            let interfaceName: (Int32) -> String? = { namesInterfaces ? Self.interfaceName(index: $0) : nil }
            while !control.withLock({ $0.isStopped }) {
                guard poll(&descriptors, 2, -1) >= 0 else {
                    if errno == EINTR { continue }
                    return Failure(operation: "poll", code: errno)
                }
                if descriptors[1].revents != 0 {
                    return nil  // Only stop() writes to the wake socket.
                }
                let socketEvents = Int32(descriptors[0].revents)
                if socketEvents & POLLNVAL != 0 {
                    return Failure(operation: "poll(netlink socket)", code: EBADF)
                }
                // POLLERR carries a pending error such as ENOBUFS, which the receive reports and clears.
                guard socketEvents & (POLLIN | POLLERR) != 0 else { continue }
                var sender = sockaddr_storage()
                var senderLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
                let count = buffer.withUnsafeMutableBytes { bytes in
                    withUnsafeMutablePointer(to: &sender) { storage in
                        storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                            recvfrom(
                                socket,
                                bytes.baseAddress,
                                bytes.count,
                                Int32(MSG_DONTWAIT),
                                address,
                                &senderLength
                            )
                        }
                    }
                }
                guard count >= 0 else {
                    switch errno {
                    case EINTR, EAGAIN, EWOULDBLOCK:
                        continue
                    case ENOBUFS:
                        deliver([], true)
                        continue
                    default:
                        return Failure(operation: "recvfrom(netlink socket)", code: errno)
                    }
                }
                guard Self.isFromKernel(sender) else { continue }
                let messages = buffer.withUnsafeBytes { bytes in
                    NetlinkMessage.parse(UnsafeRawBufferPointer(rebasing: bytes.prefix(min(count, bytes.count))))
                }
                let events = tracker.events(for: messages, interfaceName: interfaceName)
                if !events.isEmpty {
                    deliver(events, events.contains { $0.mayRestoreConnectivity })
                }
            }
            return nil
        }

        /// Whether a datagram came from the kernel (`nl_pid` 0 in its `sockaddr_nl`), not another
        /// process.
        private static func isFromKernel(_ sender: sockaddr_storage) -> Bool {
            withUnsafeBytes(of: sender) { bytes in
                bytes.loadUnaligned(fromByteOffset: 0, as: UInt16.self) == UInt16(AF_NETLINK)
                    && bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self) == 0
            }
        }

        private static func interfaceName(index: Int32) -> String? {
            var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
            guard index > 0, if_indextoname(UInt32(index), &name) != nil else { return nil }
            return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// Creates the netlink socket, bound to the monitored groups, in `namespacePath`'s namespace
        /// if given; the calling thread is back in its own namespace when this returns, or the
        /// result is a failure and the thread must run nothing else.
        private static func openSocket(namespacePath: String?) -> Result<Int32, Failure> {
            guard let namespacePath else { return makeSocket() }
            guard let setNamespace = setNamespaceFunction() else {
                return .failure(Failure(operation: "setns (not found in the C library)", code: 0))
            }
            let original = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)
            guard original >= 0 else { return .failure(Failure(operation: "open /proc/self/ns/net", code: errno)) }
            defer { close(original) }
            let target = open(namespacePath, O_RDONLY | O_CLOEXEC)
            guard target >= 0 else { return .failure(Failure(operation: "open \(namespacePath)", code: errno)) }
            defer { close(target) }
            guard setNamespace(target, cloneNewNetwork) == 0 else {
                return .failure(Failure(operation: "setns \(namespacePath)", code: errno))
            }
            let result = makeSocket()
            guard setNamespace(original, cloneNewNetwork) == 0 else {
                let failure = Failure(operation: "setns back to /proc/self/ns/net", code: errno)
                if case .success(let socket) = result {
                    close(socket)
                }
                return .failure(failure)
            }
            return result
        }

        private static func makeSocket() -> Result<Int32, Failure> {
            let socket = Glibc.socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), netlinkRoute)
            guard socket >= 0 else { return .failure(Failure(operation: "socket(AF_NETLINK)", code: errno)) }
            // struct sockaddr_nl { sa_family_t nl_family; u16 nl_pad; u32 nl_pid; u32 nl_groups; }
            var address = sockaddr_storage()
            withUnsafeMutableBytes(of: &address) { bytes in
                bytes.storeBytes(of: UInt16(AF_NETLINK), toByteOffset: 0, as: UInt16.self)
                bytes.storeBytes(of: NetlinkMessage.multicastGroups, toByteOffset: 8, as: UInt32.self)
            }
            let bound = withUnsafePointer(to: &address) { storage in
                storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, 12) }
            }
            guard bound == 0 else {
                let code = errno
                close(socket)
                return .failure(Failure(operation: "bind(AF_NETLINK)", code: code))
            }
            return .success(socket)
        }

        /// `setns(2)`, looked up at run time: `Glibc` does not import it (it needs `_GNU_SOURCE`),
        /// and the `Courier` target has no C module of its own.
        private static func setNamespaceFunction() -> (@convention(c) (Int32, Int32) -> Int32)? {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setns") else { return nil }
            return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        }
    }
}
#endif
