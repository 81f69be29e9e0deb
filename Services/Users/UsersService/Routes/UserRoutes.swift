import DataEngine
import Hummingbird
import InternalProtocol
import NIOCore
import ServiceRuntime

/// The public `/users` endpoints served so far.
struct UserRoutes {
    let accounts: Accounts

    func add(to router: inout RESTRouter) {
        router.add(.post, "users/register") { call in
            let identity = try call.identity
            return .jsonText(try await accounts.register(appID: identity.appId, body: try Self.body(call), logger: call.context.logger))
        }
        router.add(.post, "users/login") { call in
            let identity = try call.identity
            return .jsonText(try await accounts.login(appID: identity.appId, body: try Self.body(call), logger: call.context.logger))
        }
        router.add(.get, "users/logout") { call in
            try await accounts.logout(try call.identity, logger: call.context.logger)
            return Response(status: .ok)
        }
        router.add(.get, "users/isvalidusertoken/:token") { call in
            let valid = try await accounts.isValid(
                appID: try call.identity.appId, token: call.parameters["token"] ?? "", logger: call.context.logger)
            return .jsonText(valid ? "true" : "false")
        }
    }

    /// The body as a JSON object; duplicate keys are the seed's 3043, anything else not an object 3038.
    private static func body(_ call: RESTRouter.Call) throws -> JSONObject {
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
