import InternalProtocol

/// The users API's errors with the seed's codes and wording (seed-inventory §2.2).
enum UserError {
    static let registrationDisabled = ErrorEnvelope(
        code: 3009, message: "User registration is denied for this version of application", status: 403)
    static let unknownPropertyWhileStatic = ErrorEnvelope(
        code: 3010,
        message: "User registration has an unknown property and dynamic properties are disabled for this version of the application",
        status: 400)
    static let missingPassword = ErrorEnvelope(code: 3011, message: "Missing \"password\" property", status: 400)
    static let requiredPropertyMissing = ErrorEnvelope(code: 3012, message: "Required property is missing", status: 400)
    static let missingIdentity = ErrorEnvelope(code: 3013, message: "Missing value for the identity property", status: 400)
    static let identityTaken = ErrorEnvelope(code: 3033, message: "User with the same identity already exists", status: 409)
    static let missingRegistrationData = ErrorEnvelope(
        code: 3038, message: "Missing application-id or collection of properties for the registering user", status: 400)
    static let missingLoginArguments = ErrorEnvelope(
        code: 3038, message: "One of the required parameters (application id, version, login or password) is null",
        status: 400)
    static let idProperty = ErrorEnvelope(
        code: 3039, message: "Property \"id\" cannot be used in the registration call", status: 400)
    static let badEmail = ErrorEnvelope(code: 3040, message: "Email address is in the wrong format", status: 400)
    static let duplicateProperties = ErrorEnvelope(
        code: 3043, message: "Duplicate properties in the registration request", status: 400)
    static func tooLong(_ name: String, limit: Int) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 8000, message: "Property value exceeds the length limit: '\(name)' may hold \(limit) characters",
            status: 400)
    }
    static let invalidLogin = ErrorEnvelope(code: 3003, message: "Invalid login or password.", status: 401)
    static let emptyLogin = ErrorEnvelope(
        code: 3006, message: "Either login or password is an empty string value.", status: 400)
    static let lockedOut = ErrorEnvelope(
        code: 3036, message: "Account locked out due to too many failed logins.", status: 401)
    static let accountDisabled = ErrorEnvelope(code: 3090, message: "User account is disabled.", status: 401)
    static let alreadyLoggedIn = ErrorEnvelope(
        code: 3002,
        message: "User cannot login because Multiple Logins disabled and there is a logged in user for the account.",
        status: 401)
    static let loginLimit = ErrorEnvelope(
        code: 3044, message: "Multiple login limit for the same user account has been reached.", status: 401)
    static let notLoggedIn = ErrorEnvelope(code: 3028, message: "User is not logged in.", status: 401)
}
