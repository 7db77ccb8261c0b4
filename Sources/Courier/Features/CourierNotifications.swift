import Foundation

extension Request {
    /// Posted when a request is resumed (started, or continued after a suspend).
    public static var didResumeNotification: Notification.Name { CourierNotifications.observing(.didResume) }
    /// Posted when a request is suspended.
    public static var didSuspendNotification: Notification.Name { CourierNotifications.observing(.didSuspend) }
    /// Posted when a request is cancelled.
    public static var didCancelNotification: Notification.Name { CourierNotifications.observing(.didCancel) }
    /// Posted when a request finishes, however it ended (after ``didCancelNotification`` for a cancel).
    public static var didFinishNotification: Notification.Name { CourierNotifications.observing(.didFinish) }
    /// Posted when an attempt's transfer starts, and when it continues after a suspend
    /// (Alamofire's URLSessionTask was resumed).
    public static var didResumeTaskNotification: Notification.Name { CourierNotifications.observing(.didResumeTask) }
    /// Posted when an attempt's transfer is paused by ``suspend()``.
    public static var didSuspendTaskNotification: Notification.Name {
        CourierNotifications.observing(.didSuspendTask)
    }
    /// Posted when an attempt's transfer is stopped by ``cancel()``.
    public static var didCancelTaskNotification: Notification.Name { CourierNotifications.observing(.didCancelTask) }
    /// Posted when an attempt ends, with or without an error.
    public static var didCompleteTaskNotification: Notification.Name {
        CourierNotifications.observing(.didCompleteTask)
    }
}

extension Notification.Name {
    // Courier's own spellings of the names, which post without counting as an observer's read.
    static let didResume = Notification.Name("org.courier.notification.name.request.didResume")
    static let didSuspend = Notification.Name("org.courier.notification.name.request.didSuspend")
    static let didCancel = Notification.Name("org.courier.notification.name.request.didCancel")
    static let didFinish = Notification.Name("org.courier.notification.name.request.didFinish")
    static let didResumeTask = Notification.Name("org.courier.notification.name.request.didResumeTask")
    static let didSuspendTask = Notification.Name("org.courier.notification.name.request.didSuspendTask")
    static let didCancelTask = Notification.Name("org.courier.notification.name.request.didCancelTask")
    static let didCompleteTask = Notification.Name("org.courier.notification.name.request.didCompleteTask")
}

extension Notification {
    /// The request a Courier notification is about, or `nil` for another notification.
    public var request: Request? { object as? Request }
}

extension CourierExtension where ExtendedType == Notification {
    /// The request a Courier notification is about (`notification.courier.request`), or `nil`.
    public var request: Request? { type.request }
}

/// Posts a request's lifecycle as `NotificationCenter` notifications (``Request/didResumeNotification``
/// and the others), as Alamofire's `AlamofireNotifications`. Each notification's `object` is the
/// request, which ``Foundation/Notification/request`` reads.
///
/// Every session posts them to `NotificationCenter.default` unless
/// ``Session/Configuration-swift.struct/postsNotifications`` is off, from the moment your
/// program first reads one of the names (as `addObserver(forName: Request.didFinishNotification, …)`
/// does), for the requests made from then on: until something could be observing them, nothing
/// is posted. Posting costs about 10 %
/// of a request's instructions on Linux, which a program that never observes them should not pay.
/// An observer that matches names itself (registered for every name) calls
/// ``startPosting()`` first. A monitor of your own (``init(center:queue:)``) always posts.
///
/// A request queues each notification with the change it reports, under the request's lock, so
/// its notifications are posted in the order its changes happened. They are posted on ``queue``,
/// never on a transport's thread, so a slow observer delays other observers but no request. Events close together are posted together:
/// one wake-up of the queue for a burst, not one per event.
///
/// ```swift
/// NotificationCenter.default.addObserver(forName: Request.didFinishNotification, object: nil, queue: nil) {
///     print("finished:", $0.courier.request?.description ?? "")
/// }
/// ```
public final class CourierNotifications: EventMonitor {
    /// The queue notifications are posted on.
    public let queue: DispatchQueue
    /// Where they are posted.
    public let center: NotificationCenter
    /// What waits to be posted, and whether a drain of it is scheduled on ``queue``.
    private let pending = Protected((items: [(Notification.Name, Request)](), isScheduled: false))

    /// The monitor sessions share to post to the default center, once something may observe.
    static let shared = CourierNotifications(postsOnceObserved: true)

    /// Whether this monitor posts: always, for one made with the public initializer; for the
    /// shared one, once a program reads a notification name (or calls ``startPosting()``).
    /// Never cleared.
    private let isObserved: Protected<Bool>

    /// The public spelling of `name`, read by an observer: from now on the sessions post.
    static func observing(_ name: Notification.Name) -> Notification.Name {
        startPosting()
        return name
    }

    /// Makes every session post its notifications from now on, for an observer that does not
    /// read the names (one registered for every name, which compares raw values). Reading any
    /// `Request.did…Notification` does the same.
    public static func startPosting() {
        shared.startPosting()
    }

    /// Whether this monitor posts now.
    var isPosting: Bool { isObserved.withLock { $0 } }

    /// Makes this monitor post from now on.
    func startPosting() {
        isObserved.withLock { $0 = true }
    }

    /// A monitor posting to `center` on `queue` (a serial queue of its own by default).
    public convenience init(
        center: NotificationCenter = .default,
        queue: DispatchQueue = DispatchQueue(label: "Courier.Notifications")
    ) {
        self.init(center: center, queue: queue, postsOnceObserved: false)
    }

    /// A monitor that posts from the start, or (`postsOnceObserved`) only after ``startPosting()``.
    init(
        center: NotificationCenter = .default,
        queue: DispatchQueue = DispatchQueue(label: "Courier.Notifications"),
        postsOnceObserved: Bool
    ) {
        self.center = center
        self.queue = queue
        isObserved = Protected(!postsOnceObserved)
    }

    /// Posts ``Request/didResumeNotification``.
    public func requestDidResume(_ request: Request) { post(.didResume, request) }
    /// Posts ``Request/didSuspendNotification``.
    public func requestDidSuspend(_ request: Request) { post(.didSuspend, request) }
    /// Posts ``Request/didCancelNotification``.
    public func requestDidCancel(_ request: Request) { post(.didCancel, request) }
    /// Posts ``Request/didFinishNotification``.
    public func requestDidFinish(_ request: Request) { post(.didFinish, request) }
    /// Posts ``Request/didResumeTaskNotification``.
    public func requestDidResumeTask(_ request: Request) { post(.didResumeTask, request) }
    /// Posts ``Request/didSuspendTaskNotification``.
    public func requestDidSuspendTask(_ request: Request) { post(.didSuspendTask, request) }
    /// Posts ``Request/didCancelTaskNotification``.
    public func requestDidCancelTask(_ request: Request) { post(.didCancelTask, request) }
    /// Posts ``Request/didCompleteTaskNotification``.
    public func request(_ request: Request, didCompleteAttemptWith metrics: RequestMetrics, error: CourierError?) {
        post(.didCompleteTask, request)
    }

    /// Queues `name` for `request`; the first of a burst schedules the drain.
    func post(_ name: Notification.Name, _ request: Request) {
        guard isObserved.withLock({ $0 }) else { return }
        let schedules = pending.withLock { pending -> Bool in
            pending.items.append((name, request))
            defer { pending.isScheduled = true }
            return !pending.isScheduled
        }
        if schedules { queue.async { self.drain() } }
    }

    /// Posts what is queued, in order, until nothing is left.
    private func drain() {
        while true {
            let items = pending.withLock { pending -> [(Notification.Name, Request)] in
                if pending.items.isEmpty { pending.isScheduled = false }
                defer { pending.items.removeAll(keepingCapacity: true) }
                return pending.items
            }
            guard !items.isEmpty else { return }
            for (name, request) in items {
                center.post(name: name, object: request)
            }
        }
    }
}
