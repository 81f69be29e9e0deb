import Hummingbird
import InternalProtocol
import ServiceRuntime

/// Turns a request's credentials into an ``Identity``: the app, the key's kind and the roles
/// that follow. Keys and session tokens resolve through users-service and are cached briefly.
struct AppResolver: Sendable {
    let peers: InternalClient
    let cache: APIKeyCache
    let sessions: SessionCache
    let configuration: GatewayConfiguration

    /// The resolved app with the request's identity.
    struct Resolved: Sendable {
        let appName: String
        var identity: Identity
    }

    /// `identity` as the user whose session `token` names: `AuthenticatedUser` instead of
    /// `NotAuthenticatedUser`, plus the user's custom roles; 3064 for a token that names no
    /// live session.
    func authenticate(_ identity: Identity, token: String, context: CallContext) async throws -> Identity {
        let key = SessionCache.Key(appID: identity.appId, token: token)
        let session: ResolveUserToken.Response
        if let cached = await sessions.lookup(key) {
            session = cached
        } else {
            let generation = await sessions.generation
            var call = context
            call.identity = identity
            session = try await peers.call(
                ResolveUserToken.self, .init(appId: identity.appId, token: token), on: .users, context: call)
            await sessions.store(session, for: key, startedIn: generation)
        }
        return identity.authenticated(as: session)
    }

    /// The app and key kind of a request: from its path, its headers, its query, or (keyless
    /// routes) the app alone.
    func resolve(_ address: PublicAddress, headers: HTTPFields, queryKey: String?, call context: CallContext)
        async throws -> Resolved
    {
        switch address.credentials {
        case .query:
            guard let appID = address.appID, let apiKey = queryKey, !apiKey.isEmpty else {
                throw ErrorEnvelope.invalidApplicationInfo
            }
            return try await resolve(appID: appID, apiKey: apiKey, context: context)
        case .path:
            guard let appID = address.appID, let apiKey = address.apiKey else {
                throw ErrorEnvelope.invalidApplicationInfo
            }
            return try await resolve(appID: appID, apiKey: apiKey, context: context)
        case .headers:
            guard let appID = headers[.applicationID] ?? configuration.defaultAppID else {
                throw ErrorEnvelope.invalidApplicationInfo
            }
            if let apiKey = headers[.apiKey] ?? headers[.secretKey] {
                return try await resolve(appID: appID, apiKey: apiKey, context: context)
            }
            guard configuration.keylessAPIPath else { throw ErrorEnvelope.invalidApplicationInfo }
            return try await anonymous(appID: appID, context: context)
        case .appOnly:
            guard let appID = address.appID else { throw ErrorEnvelope.invalidApplicationInfo }
            return try await anonymous(appID: appID, context: context)
        }
    }

    /// The app acting as an anonymous REST client.
    private func anonymous(appID: String, context: CallContext) async throws -> Resolved {
        let app = try await peers.call(GetApp.self, .init(appId: appID), on: .users, context: context)
        return Resolved(appName: app.name, identity: .anonymous(appId: app.appId, keyKind: .rest))
    }

    private func resolve(appID: String, apiKey: String, context: CallContext) async throws -> Resolved {
        let pair = APIKeyCache.Pair(appID: appID, apiKey: apiKey)
        let result: Result<ResolveAPIKey.Response, ErrorEnvelope>
        if let cached = await cache.lookup(pair) {
            result = cached
        } else {
            result = await lookup(pair, context: context)
            if case .failure(let envelope) = result, envelope.code != ErrorEnvelope.invalidApplicationInfo.code {
                throw envelope
            }
            await cache.store(result, for: pair)
        }
        let key = try result.get()
        return Resolved(appName: key.appName, identity: .anonymous(appId: key.appId, keyKind: key.keyKind))
    }

    private func lookup(_ pair: APIKeyCache.Pair, context: CallContext) async -> Result<
        ResolveAPIKey.Response, ErrorEnvelope
    > {
        do {
            return .success(
                try await peers.call(
                    ResolveAPIKey.self, .init(appId: pair.appID, apiKey: pair.apiKey), on: .users, context: context))
        } catch let envelope as ErrorEnvelope {
            return .failure(envelope)
        } catch {
            return .failure(.internalError)
        }
    }
}
