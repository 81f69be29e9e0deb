import AsyncHTTPClient
import InternalProtocol
import Logging
import Synchronization

/// A process's call lanes to each peer, on the lanes' HTTP client: a call goes on the first
/// lane with room, a new lane opens when none has (at most ``maximumLanes`` per peer), and a
/// lane that ended is replaced by the next call.
final class CallLanes: Sendable {
    /// The most lanes to one peer, so at most 256 × 16 calls wait on a peer at once.
    static let maximumLanes = 16

    private let client: HTTPClient
    private let lanes = Mutex<[ServiceName: [CallLane]]>([:])

    /// Lanes opened on `client`, which the caller shuts down.
    init(client: HTTPClient) {
        self.client = client
    }

    /// A lane to `service` (at `base`) with room for a call; nil when every lane is full.
    func lane(to service: ServiceName, base: String, logger: Logger) -> CallLane? {
        let (lane, isNew): (CallLane?, Bool) = lanes.withLock { lanes in
            var open = lanes[service, default: []].filter { !$0.isClosed }
            defer { lanes[service] = open }
            if let lane = open.first(where: \.hasRoom) { return (lane, false) }
            guard open.count < Self.maximumLanes else { return (nil, false) }
            let lane = CallLane()
            open.append(lane)
            return (lane, true)
        }
        if let lane, isNew { lane.open(url: base + CallLaneServer.path, client: client, logger: logger) }
        return lane
    }

    /// Ends every lane: the calls still on them are lost.
    func closeAll() {
        for lane in lanes.withLock({ $0.values.flatMap { $0 } }) { lane.close() }
    }
}
