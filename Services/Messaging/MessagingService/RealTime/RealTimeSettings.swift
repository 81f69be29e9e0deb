import Configuration
import ServiceRuntime

/// The real-time endpoint's settings.
///
/// Configuration keys: `BAAS_RT_PING_INTERVAL_MS` (default 25000) and `BAAS_RT_PING_TIMEOUT_MS`
/// (default 20000), the Engine.IO heartbeat: a connection silent for both together is closed;
/// `BAAS_RT_MAX_SUBSCRIPTIONS` (per connection, default 500) and `BAAS_RT_QUEUE_LIMIT` (frames
/// waiting for a slow client before it is disconnected, default 1000); `BAAS_RT_CHANGE_POLL_MS`
/// (default 20), how often the relay reads the change slot while this instance has data
/// subscribers; `BAAS_RT_RESUME_WINDOW_MS` (default 30000), how long a client that lost its
/// connection may come back and receive the data change events it missed;
/// `BAAS_RT_MAX_POLLING_SESSIONS` (default 10000), long-polling sessions one instance keeps.
struct RealTimeSettings: Sendable {
    var pingInterval: Duration = .seconds(25)
    var pingTimeout: Duration = .seconds(20)
    var maximumSubscriptions = 500
    var queueLimit = 1_000
    var changePollInterval: Duration = .milliseconds(20)
    var resumeWindow: Duration = .seconds(30)
    var maximumPollingSessions = 10_000
    /// The largest frame a client may send (Engine.IO 4's `maxPayload`).
    var maximumPayload = 1_000_000

    /// How long a connection may stay silent.
    var silenceLimit: Duration { pingInterval + pingTimeout }

    /// How often watches are renewed.
    static let watchRenewal: Duration = .seconds(20)

    /// How long one watch of a table lasts: past the last renewal, long enough for a client
    /// that lost its connection to come back within the resume window and miss nothing.
    var watchDuration: Duration { max(.seconds(60), resumeWindow + Self.watchRenewal * 2) }

    /// How long the change log keeps an event: the resume window and some slack.
    var logRetention: Duration { resumeWindow + .seconds(60) }

    static func read(_ reader: ConfigReader) throws -> RealTimeSettings {
        let rt = reader.scoped(to: "rt")
        var settings = RealTimeSettings()
        settings.pingInterval = .milliseconds(rt.int(forKey: "pingIntervalMs", default: 25_000))
        settings.pingTimeout = .milliseconds(rt.int(forKey: "pingTimeoutMs", default: 20_000))
        settings.maximumSubscriptions = rt.int(forKey: "maxSubscriptions", default: 500)
        settings.queueLimit = rt.int(forKey: "queueLimit", default: 1_000)
        settings.changePollInterval = .milliseconds(rt.int(forKey: "changePollMs", default: 20))
        settings.resumeWindow = .milliseconds(rt.int(forKey: "resumeWindowMs", default: 30_000))
        settings.maximumPollingSessions = rt.int(forKey: "maxPollingSessions", default: 10_000)
        let durations = [
            settings.pingInterval, settings.pingTimeout, settings.changePollInterval, settings.resumeWindow,
        ]
        guard durations.allSatisfy({ $0 > .zero }), settings.maximumSubscriptions >= 1, settings.queueLimit >= 1,
            settings.maximumPollingSessions >= 1
        else {
            throw UsageError("BAAS_RT_* settings must be positive")
        }
        return settings
    }
}
