import InternalProtocol
import PostgresSupport

/// Real-time connections hear what gateways hear on ``SessionsChannel``: a logout, a disabled
/// or deleted user, a new password, a role given or taken. Each live session of the user named
/// (of every user of the app, for an announcement naming only the app; of every user, once the
/// listener is back after it may have missed some) looks its identity up again and keeps only
/// what that identity may receive: checking at subscription time alone let a revoked token keep
/// its feed for as long as its socket stayed open.
struct RTRevocations: NotificationListener.Consumer {
    let live: RTSessions

    func setListening(_ listening: Bool) async {
        if listening { reauthorize(live.sessions(ofApp: nil, user: nil)) }
    }

    func receive(_ payload: String) async {
        let announced = SessionsChannel.announced(payload)
        reauthorize(live.sessions(ofApp: announced?.appID, user: announced?.userID))
    }

    private func reauthorize(_ sessions: [RTSession]) {
        for session in sessions { session.received(.reauthorize) }
    }
}
