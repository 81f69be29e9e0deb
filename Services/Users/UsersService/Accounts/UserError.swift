import InternalProtocol

/// The users API's errors with the seed's codes and wording (seed-inventory §2.2).
enum UserError {
    static let registrationDisabled = ErrorEnvelope(
        code: 3009, message: "User registration is denied for this version of application", status: 403)
    static let unknownPropertyWhileStatic = ErrorEnvelope(
        code: 3010,
        message:
            "User registration has an unknown property and dynamic properties are disabled for this version of the application",
        status: 400)
    static let missingPassword = ErrorEnvelope(code: 3011, message: "Missing \"password\" property", status: 400)
    static let requiredPropertyMissing = ErrorEnvelope(code: 3012, message: "Required property is missing", status: 400)
    static let missingIdentity = ErrorEnvelope(
        code: 3013, message: "Missing value for the identity property", status: 400)
    static let identityTaken = ErrorEnvelope(
        code: 3033, message: "User with the same identity already exists", status: 409)
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
    /// 3090, 401: a `DISABLED` account, as the JS SDK's e2e `users.js` expects (and its logout
    /// forgets the user on 3090); the seed's 3000 is the account awaiting confirmation.
    static let accountDisabled = ErrorEnvelope(code: 3090, message: "User account is disabled.", status: 401)
    static let alreadyLoggedIn = ErrorEnvelope(
        code: 3002,
        message: "User cannot login because Multiple Logins disabled and there is a logged in user for the account.",
        status: 401)
    static let loginLimit = ErrorEnvelope(
        code: 3044, message: "Multiple login limit for the same user account has been reached.", status: 401)
    static let notLoggedIn = ErrorEnvelope(code: 3028, message: "User is not logged in.", status: 401)
    static let anotherUser = ErrorEnvelope(
        code: 3029,
        message:
            "Cannot modify properties of another user. Returned when one user is logged and the call attempts to modify properties of another user.",
        status: 403)
    static let unknownUser = ErrorEnvelope(
        code: 3030, message: "Unable to locate user account - invalid user id.", status: 404)
    static let identityTakenOnUpdate = ErrorEnvelope(
        code: 3018,
        message:
            "The property marked as \"identity\" is being updated and another user already has the specified value which must be unique.",
        status: 409)
    static let unknownPropertyOnUpdate = ErrorEnvelope(
        code: 3031, message: "A new \"dynamic\" property is being added, but dynamic property definition is disabled.",
        status: 400)
    static let requiredValuesMissing = ErrorEnvelope(
        code: 3045, message: "Required properties in the provided object do not contain values.", status: 400)
    static let missingStatus = ErrorEnvelope(
        code: 3038, message: "Missing \"userStatus\": one of ENABLED, DISABLED, EMAIL_CONFIRMATION_PENDING", status: 400
    )
    static func unknownStatus(_ status: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 3038, message: "Unknown userStatus '\(status)': one of ENABLED, DISABLED, EMAIL_CONFIRMATION_PENDING",
            status: 400)
    }
    /// 3000, 401: the account cannot log in yet — it awaits the confirmation of its email
    /// address. (A `DISABLED` account is 3090, as the JS SDK's e2e spec expects; docs/ERRORS.md.)
    static let loginDisabled = ErrorEnvelope(
        code: 3000, message: "Login has been disabled for the user account.", status: 401)
    /// 3001, 409: the app's user settings name an identity property that `Users` has no column
    /// for (it was dropped), so no login can be checked until the settings or the table change.
    static func missingLoginSettings(identityProperty: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 3001,
            message:
                "Missing login settings, possibly invalid application id or version. The identity property "
                + "'\(identityProperty)' is not a column of Users",
            status: 409)
    }
    /// 3021: a registration refused for a reason without a code of its own (a value its column
    /// cannot hold, a property name that cannot be a column, a unique column other than the
    /// identity). The detail is `cause`'s message, which this project wrote (never the
    /// database's text), and `cause`'s HTTP status stays.
    static func registrationFailed(_ cause: ErrorEnvelope) -> ErrorEnvelope {
        ErrorEnvelope(code: 3021, message: "General user registration error. \(cause.message)", status: cause.status)
    }
    /// 3023: a logout the session store could not carry out; `detail` says why in this
    /// project's words. The JS SDK forgets its current user on 3023, as on 3064.
    static func logoutFailed(_ detail: String, status: Int) -> ErrorEnvelope {
        ErrorEnvelope(code: 3023, message: "General error while executing logout. \(detail)", status: status)
    }
    /// Role management and other users' roles and statuses (the seed: "only with the CodeRunner
    /// API key"); 4000 is the contract's "no permission" code.
    static let serverCodeOnly = ErrorEnvelope(
        code: 4000, message: "Permission denied: this operation requires the server-code (CodeRunner) API key",
        status: 403)
    static let unknownRole = ErrorEnvelope(code: 2005, message: "Could not find role.", status: 404)
    static let missingRoleArguments = ErrorEnvelope(
        code: 3038, message: "One of the required parameters (user identity or roleName) is null.", status: 400)
    static let userNotFound = ErrorEnvelope(code: 3057, message: "Could not find user by id or identity.", status: 404)
    static let cannotAssign = ErrorEnvelope(code: 3058, message: "Could not assign role to user.", status: 400)
    static let cannotUnassign = ErrorEnvelope(code: 3059, message: "Could not unassign role to user.", status: 400)
    static func throttled(retryAfter seconds: Int) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 429, message: "Too many login attempts; try again in \(seconds) seconds", status: 429)
    }
    static let unknownIdentity = ErrorEnvelope(
        code: 3020, message: "Unable to find user with the specified login (invalid user identity).", status: 404)
    static let noEmailAddress = ErrorEnvelope(
        code: 3025, message: "The user has no valid email address to send the message to", status: 400)
    /// 3025, 403: the app turned the password reset email off (as 3009 refuses registration
    /// when it is off); the request itself is well formed.
    static let recoveryDisabled = ErrorEnvelope(
        code: 3025, message: "Password recovery email is disabled for this application", status: 403)
    /// 3025, 404: no live link has the token of the path (never issued, used, replaced or
    /// expired, or mailed to an address the user no longer has).
    static let invalidLink = ErrorEnvelope(
        code: 3025, message: "The link is invalid, already used or expired", status: 404)
    static let alreadyConfirmed = ErrorEnvelope(
        code: 3025, message: "The user's email address does not await confirmation", status: 400)
    static let mailNotConfigured = ErrorEnvelope(
        code: 5100, message: "Email is not configured: set BAAS_USERS_PUBLIC_URL and an SMTP relay", status: 503)
    static let emailRequired = ErrorEnvelope(
        code: 3041, message: "A value for a required property is missing: email (the app confirms email addresses)",
        status: 400)
    static let guestUpdate = ErrorEnvelope(
        code: 3024,
        message:
            "General \"update registration\" error: a guest gets a password or identity by registering with its objectId",
        status: 400)
    static let convertingAnotherGuest = ErrorEnvelope(
        code: 3029, message: "Cannot modify properties of another user: only the guest itself may register its account",
        status: 403)
}
