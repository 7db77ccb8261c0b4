/// Bounds how many `courier` processes the tests run at once.
///
/// Swift Testing runs every test of the package in parallel; dozens of debug binaries starting
/// together on a two-core machine would starve the library's own tests, some of which measure
/// time. Waiting for a slot costs this suite little: most of its runs take a fraction of a second.
actor ProcessSlots {
    /// The slots shared by every test of this target.
    static let shared = ProcessSlots(limit: 1)

    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) {
        available = limit
    }

    /// Waits for a slot and takes it.
    func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Gives a slot back, to the longest waiter if there is one.
    func release() {
        if waiters.isEmpty {
            available += 1
        } else {
            waiters.removeFirst().resume()
        }
    }
}
