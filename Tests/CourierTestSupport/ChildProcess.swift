import Foundation

/// Starts `process`, one launch at a time in the whole test process.
///
/// FoundationNetworking's `Process.run()` on Linux is not safe to call from several threads at
/// once: with the CLI, network-namespace and default-transport tests launching in parallel, one
/// launch crashed inside `Process.run()` (a bad pointer in its `memcpy`). Every test target
/// launches through here.
public func launch(_ process: Process) throws {
    launchLock.lock()
    defer { launchLock.unlock() }
    try process.run()
}

/// Guards `launch(_:)`.
private let launchLock = NSLock()

/// The next bytes from `handle`, or an empty `Data` at the end (or on an error), reading again
/// when a signal interrupts the read. `FileHandle.availableData` and `readDataToEndOfFile()`
/// trap on `EINTR` on Linux, which a child process's exit can cause.
public func readChunk(from handle: FileHandle) -> Data {
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
        if count >= 0 { return Data(buffer[..<count]) }
        if errno != EINTR { return Data() }
    }
}

/// Everything left in `handle`, read with ``readChunk(from:)``.
public func readToEnd(_ handle: FileHandle) -> Data {
    var data = Data()
    while true {
        let chunk = readChunk(from: handle)
        if chunk.isEmpty { return data }
        data.append(chunk)
    }
}

/// The executable `name` that `swift build` put in the build products folder beside this test
/// bundle, and the places searched. On Linux the bundle is `CourierPackageTests.xctest` in that
/// folder; on macOS the test runner lives deeper inside the bundle, so a few parents are tried.
public func builtExecutable(named name: String) -> (url: URL?, searched: [String]) {
    let manager = FileManager.default
    var starts: [URL] = []
    if let executable = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        starts.append(URL(fileURLWithPath: executable))
    }
    starts.append(Bundle.main.bundleURL)
    if let first = CommandLine.arguments.first { starts.append(URL(fileURLWithPath: first)) }
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        starts.append(bundle.bundleURL)
    }
    var searched: [String] = []
    for start in starts {
        var folder = start.deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = folder.appendingPathComponent(name)
            searched.append(candidate.path)
            if manager.isExecutableFile(atPath: candidate.path) { return (candidate, searched) }
            folder = folder.deletingLastPathComponent()
        }
    }
    return (nil, searched)
}
