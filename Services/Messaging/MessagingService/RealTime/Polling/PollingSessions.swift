/// This process's long-polling sessions by id (their HTTP requests come and go; a session
/// lives until its ``RTSession`` ends).
actor PollingSessions {
    private var transports: [String: PollingTransport] = [:]

    /// The session `id` of `app`, if it is live here.
    func find(_ id: String, app: String) -> PollingTransport? {
        guard let transport = transports[id], transport.app == app else { return nil }
        return transport
    }

    func add(_ transport: PollingTransport) {
        transports[transport.id] = transport
    }

    func ended(_ id: String) {
        transports[id] = nil
    }

    /// How many sessions are live.
    var count: Int { transports.count }
}
