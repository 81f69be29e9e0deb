import DataEngine
import Hummingbird
import InternalProtocol
import NIOCore
import ServiceRuntime

/// The public `/users` endpoints: accounts and sessions here, profiles and roles in extensions.
struct UserRoutes {
    let accounts: Accounts

    func add(to router: inout PublicRoutes) {
        router.publish(UserSchemas.all)
        addSessions(to: &router)
        // Roles first: `PUT users/roles/status` is a role, not the status of a user "roles".
        addRoles(to: &router)
        addEmail(to: &router)
        addSettings(to: &router)
        addProfiles(to: &router)
    }

    private func addSessions(to router: inout PublicRoutes) {
        router.add(.post, "users/register", doc: .registerUser) { call in
            let identity = call.identity
            return .jsonText(
                try await accounts.register(
                    appID: identity.appId, body: try Self.body(call), callerID: identity.userId,
                    logger: call.context.logger))
        }
        router.add(.post, "users/register/guest", doc: .registerGuest) { call in
            .jsonText(try await accounts.registerGuest(appID: call.identity.appId, logger: call.context.logger))
        }
        router.add(.post, "users/login", doc: .login) { call in
            let identity = call.identity
            return .jsonText(
                try await accounts.login(
                    appID: identity.appId, body: try Self.body(call), clientAddress: call.context.clientAddress,
                    logger: call.context.logger))
        }
        router.add(.get, "users/logout", doc: .logout) { call in
            let identity = call.identity
            try await accounts.logout(identity, logger: call.context.logger)
            return Response(status: .ok).endingSessions(of: identity.userId)
        }
        router.add(.get, "users/isvalidusertoken/:token", doc: .isValidUserToken) { call in
            let valid = try await accounts.isValid(
                appID: call.identity.appId, token: call.parameters["token"] ?? "", logger: call.context.logger)
            return .jsonText(valid ? "true" : "false")
        }
    }

    /// The body as a JSON object; duplicate keys are the seed's 3043, anything else not an object 3038.
    static func body(_ call: PublicCall) throws -> JSONObject {
        do {
            guard let object = try JSONParser.parse(Array(call.body.readableBytesView)).object else {
                throw UserError.missingRegistrationData
            }
            return object
        } catch let error as JSONParseError where error.message.contains("duplicate key") {
            throw UserError.duplicateProperties
        } catch is JSONParseError {
            throw UserError.missingRegistrationData
        }
    }
}
