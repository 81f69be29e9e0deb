/// This process's long-polling sessions by id (their HTTP requests come and go; a session
/// lives until its ``RTSession`` ends).
actor PollingSessions {
    private var transports: [String: PollingTransport] = [:]

    /// The session `id`, if it is live here and `caller` opened it: a session id travels in
    /// URLs (proxies and access logs keep them), so it is no credential on its own.
    func find(_ id: String, for caller: PollingTransport.Owner) -> PollingTransport? {
        guard let transport = transports[id], transport.owner == caller else { return nil }
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
