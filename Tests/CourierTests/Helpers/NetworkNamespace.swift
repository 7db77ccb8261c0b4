#if os(Linux)
import CourierTestSupport
import Foundation

/// A network namespace made with `ip netns add`, so a test can add, raise and drop links without
/// touching the host's network. Delete it when done; its links go with it.
struct NetworkNamespace {
    /// An `ip` command that failed, with what it printed.
    struct CommandFailure: Error, CustomStringConvertible {
        let arguments: [String]
        let status: Int32
        let output: String

        var description: String { "`ip \(arguments.joined(separator: " "))` exited with \(status): \(output)" }

        /// Whether `ip` failed for want of privileges (not root, or no `CAP_SYS_ADMIN`).
        var isPermissionDenied: Bool {
            output.contains("Operation not permitted") || output.contains("Permission denied")
        }
    }

    /// The namespace's name, `courier-test-` and a random suffix.
    let name: String

    /// The file naming the namespace, which ``NetworkMonitor`` enters.
    var path: String { "/var/run/netns/\(name)" }

    /// Whether this process may create namespaces, found by creating and deleting one. Failures
    /// other than a refused permission count as allowed, so the test runs and reports them.
    static let canCreate: Bool = {
        do {
            try create().delete()
            return true
        } catch let failure as CommandFailure {
            return !failure.isPermissionDenied
        } catch {
            return true
        }
    }()

    /// Creates a namespace with a fresh name.
    static func create() throws -> NetworkNamespace {
        let namespace = NetworkNamespace(name: "courier-test-\(UInt32.random(in: 0...UInt32.max))")
        _ = try ip(["netns", "add", namespace.name])
        return namespace
    }

    /// Runs `ip arguments…` inside the namespace (`ip netns exec NAME ip …`).
    @discardableResult
    func ip(_ arguments: String...) throws -> String {
        try Self.ip(["netns", "exec", name, "ip"] + arguments)
    }

    /// Deletes the namespace and its links; failures are ignored.
    func delete() {
        _ = try? Self.ip(["netns", "delete", name])
    }

    private static func ip(_ arguments: [String]) throws -> String {
        let process = try ChildProcess(
            path: "/usr/bin/env",
            arguments: ["ip"] + arguments,
            standardOutput: .pipe,
            standardError: .standardOutput
        )
        let (data, termination) = process.outputAndTermination(killingAfter: 30)
        let status = termination.status
        let text = String(decoding: data, as: UTF8.self)
        guard status == 0 else {
            throw CommandFailure(arguments: arguments, status: status, output: text)
        }
        return text
    }
}
#endif
