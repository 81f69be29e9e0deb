import DataEngine
import InternalProtocol
import ServiceRuntime

/// The named schemas of the users routes' descriptions, published as components.
enum UserSchemas {
    /// `UserProfile`: a row of `Users` as the users API answers it (never the password).
    static let profile = APISchema.object(profileProperties)

    /// `UserSession`: a logged-in user, with the new session's `user-token`.
    static let session = APISchema.object(profileProperties, required: ["objectId", "user-token"])

    /// `UserSettings`: the app's user policy, every member present.
    static let settings = APISchema.object(settingsProperties, required: settingsProperties.keys.sorted())

    /// `UserEmailTemplate`: the email one event sends.
    static let emailTemplate = APISchema.object(
        ["subject": .string, "text": .string, "html": .string, "enabled": .boolean],
        required: ["subject", "text", "html", "enabled"])

    /// `UserClassProperty`: one column of `Users` in the contract's `properties` shape.
    static let classProperty = APISchema.object(
        [
            "name": .string, "required": .boolean, "type": .string, "isPrimaryKey": .boolean,
            "identity": APISchema.boolean.described("Whether this is the identity property"),
        ], required: ["name", "required", "type", "isPrimaryKey", "identity"])

    /// The profile's members: the data object's system columns and the users API's own.
    private static let profileProperties: [String: APISchema] = (CommonSchemas.dataObject.properties ?? [:])
        .merging([
            "email": APISchema.string.orNull,
            "userStatus": APISchema.string.orNull.described("ENABLED, DISABLED, EMAIL_CONFIRMATION_PENDING or GUEST"),
            "lastLogin": APISchema.integer.orNull.described("Milliseconds since 1970"),
            "user-token": APISchema.string.described("The session's token, on login and guest registration"),
        ]) { _, new in new }

    /// The policy's members as answered.
    private static let settingsProperties = settingsMembers(
        identity: .string, number: .integer)

    /// The policy's members as a change names them: numbers from 1 to ten years in seconds, and
    /// an identity property that can name a column.
    fileprivate static let settingsChange = settingsMembers(
        identity: matching(.string, "^[A-Za-z][A-Za-z0-9_]{0,62}$"),
        number: APISchema.integer.within(1, Double(UserPolicy.settingLimit)))

    private static func settingsMembers(identity: APISchema, number: APISchema) -> [String: APISchema] {
        [
            "identityProperty": identity, "registrationEnabled": .boolean, "sessionTimeoutSeconds": number,
            "maxFailedLogins": number, "failureWindowSeconds": number, "lockoutSeconds": number,
            "maxSessions": number, "rejectExtraLogins": .boolean, "emailConfirmation": .boolean,
            "resetTokenSeconds": number, "confirmationTokenSeconds": number,
        ]
    }

    /// Every users schema by name.
    static let all: [String: APISchema] = [
        "UserProfile": profile, "UserSession": session, "UserSettings": settings,
        "UserEmailTemplate": emailTemplate, "UserClassProperty": classProperty,
    ]
}

/// `schema` matching the regular expression `expression` (and no empty string).
private func matching(_ schema: APISchema, _ expression: String) -> APISchema {
    var schema = schema
    schema.pattern = expression
    schema.minLength = 1
    return schema
}

/// A non-empty string.
private let nonEmptyString: APISchema = {
    var schema = APISchema.string
    schema.minLength = 1
    return schema
}()

/// An email address as ``EmailAddress/isValid(_:)`` takes it: one `@` after a non-empty local
/// part, a dotted domain of non-empty labels, no spaces, commas or semicolons (nor NUL, which no
/// stored text holds), at most ``Accounts/identityLimit`` characters. Not `format: email`, which
/// is RFC 5321's and differs both ways.
private let emailAddress = matching(
    APISchema.string.length(1, Accounts.identityLimit),
    #"^[^@\s,;\u0000]+@[^@\s,;.\u0000]+(?:\.[^@\s,;.\u0000]+)+$"#)

/// A password: 1 to ``Accounts/passwordByteLimit`` bytes (JSON Schema counts characters, so
/// the bound is stated in characters and the description says bytes).
private let passwordValue = nonEmptyString.length(1, Accounts.passwordByteLimit).described(
    "At most \(Accounts.passwordByteLimit) bytes")

/// A property of `Users` as a profile names it: a column name (DataEngine's `Identifier`).
private let propertyName = APISchema.string.matching("^[A-Za-z][A-Za-z0-9_]{0,62}$")

/// A user named by objectId or identity value.
private let userByIDOrIdentity = nonEmptyString.examples(.text(DocumentExamples.email)).described(
    "The user's objectId or identity")

/// The token an emailed link carries: 16 random bytes as upper-case hex in UUID groups
/// (``SessionToken``; the server compares them ignoring case).
private let linkToken = APISchema.string.matching(
    "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$"
).described("The token of the emailed link")

/// The answer of routes that answer 200 without a body.
private let emptyAnswer = RouteDoc.Body.none

/// An HTML page.
private let htmlPage = RouteDoc.Body(mediaType: "text/html", schema: .string)

extension RouteDoc {
    // MARK: Sessions

    /// `POST users/register`.
    static let registerUser = RouteDoc(
        "Registers a user (converting a guest when the body names the guest's objectId).",
        body: .json(
            .object(
                [
                    "password": passwordValue,
                    "email": emailAddress.described(
                        "The identity property; an app that names another identity property needs that one instead"),
                    "objectId": APISchema.string.described("A guest's objectId, with the guest's own user-token"),
                ], required: ["password", "email"]
            ).members(0, named: propertyName).described("The new user's properties; new names become columns of Users")),
        json: .ref("UserProfile")
    ).linking(
        [("UpdateUser", "PUT", "users/:id"), ("ReadRoles", "GET", "users/userroles/:id")],
        ["id": "$response.body#/objectId"])

    /// `POST users/register/guest`.
    static let registerGuest = RouteDoc("Creates a guest user and logs it in.", json: .ref("UserSession"))

    /// `POST users/login`.
    static let login = RouteDoc(
        "Logs a user in with its identity and password.",
        body: .json(
            .object(
                [
                    "login": nonEmptyString.length(1, Accounts.identityLimit).examples(.text(DocumentExamples.email))
                        .described("The identity value"),
                    "password": passwordValue.examples(.text(DocumentExamples.password)),
                ], required: ["login", "password"])),
        json: .ref("UserSession"))

    /// `GET users/logout`.
    static let logout = RouteDoc("Ends the caller's session.", answer: emptyAnswer)

    /// `GET users/isvalidusertoken/:token`.
    static let isValidUserToken = RouteDoc("Tells whether a user token names a live session.", json: .boolean)

    // MARK: Roles

    /// `GET users/userroles`.
    static let callerRoles = RouteDoc("Lists the caller's roles.", json: .array(.string))

    /// `GET users/userroles/:id`.
    static let userRoles = RouteDoc(
        "Lists the custom roles of a user, named by id or identity (server-code key).", json: .array(.string)
    ).path("id", userByIDOrIdentity)

    /// `POST users/assignRole`.
    static let assignRole = RouteDoc(
        "Gives a user a custom role (server-code key).", body: .json(roleMembership), answer: emptyAnswer)

    /// `POST users/unassignRole`.
    static let unassignRole = RouteDoc(
        "Takes a custom role from a user (server-code key).", body: .json(roleMembership), answer: emptyAnswer)

    /// `GET users/role/:name`.
    static let roleMembers = RouteDoc(
        "Lists a page of the users in a custom role.",
        query: [
            QueryParameter(
                "loadRoles", .string, "true adds each user's roles as `roles`; any other value leaves them out")
        ] + FindQueryDocs.find,
        json: .array(.ref("UserProfile")))

    /// `GET users/roles`.
    static let customRoles = RouteDoc("Lists the app's custom roles (server-code key).", json: .array(.string))

    /// `PUT users/roles/:name`.
    static let createRole: RouteDoc = {
        var doc = RouteDoc(
            "Creates a custom role (server-code key).", json: .object(["name": .string], required: ["name"]),
            status: 201)
        doc.otherStatuses = [200]
        return doc.linking(
            [("ReadMembers", "GET", "users/role/:name"), ("DeleteRole", "DELETE", "users/roles/:name")],
            ["name": "$request.path.name"])
    }()

    /// `DELETE users/roles/:name`.
    static let deleteRole = RouteDoc(
        "Deletes a custom role and its memberships (server-code key).", answer: emptyAnswer)

    /// `{user, roleName}`: a user by id or identity and a custom role.
    private static let roleMembership = APISchema.object(
        ["user": userByIDOrIdentity, "roleName": roleName], required: ["user", "roleName"])

    /// A custom role's name as ``Roles/validName(_:refusal:)`` takes it: 1 to 100 characters,
    /// none a control character (and no system role's name, which JSON Schema cannot say here).
    private static let roleName = APISchema.string.length(1, Roles.nameLimit)
        .matching(#"^[^\u0000-\u001F\u007F-\u009F]+$"#).examples(.text(DocumentExamples.role))
        .described("A custom role (not a system role such as AuthenticatedUser)")

    // MARK: Email and account pages

    /// `GET users/restorepassword/:identity`.
    static let restorePassword = RouteDoc(
        "Mails the user named by identity a link to set a new password.", answer: emptyAnswer)

    /// `POST users/resendconfirmation/:identity`.
    static let resendConfirmation = RouteDoc(
        "Mails the user named by identity a new email confirmation link.", answer: emptyAnswer
    ).path("identity", nonEmptyString.examples(.text(DocumentExamples.pendingEmail)))

    /// `GET account/reset-password/:token`.
    static let resetPasswordPage = RouteDoc("Shows the page that sets a new password.", answer: htmlPage)
        .path("token", linkToken)

    /// `POST account/reset-password/:token`.
    static let resetPassword = RouteDoc(
        "Sets a new password with a reset link's token and ends the user's sessions.",
        body: RouteDoc.Body(
            mediaType: "application/x-www-form-urlencoded",
            schema: .object(["password": passwordValue], required: ["password"])),
        answer: htmlPage
    ).path("token", linkToken)

    /// `GET account/confirm-email/:token`.
    static let confirmEmail = RouteDoc("Confirms a user's email address with a link's token.", answer: htmlPage)
        .path("token", linkToken)

    // MARK: Settings

    /// `GET users/settings`.
    static let userSettings = RouteDoc("Reads the app's user settings (server-code key).", json: .ref("UserSettings"))

    /// `PUT users/settings`.
    static let changeUserSettings = RouteDoc(
        "Changes some of the app's user settings (server-code key).",
        body: .json(.object(UserSchemas.settingsChange, closed: true)), json: .ref("UserSettings"))

    /// `GET users/emailtemplates/:event`.
    static let emailTemplate = RouteDoc(
        "Reads the email template of an event, confirmation or passwordReset (server-code key).",
        json: .ref("UserEmailTemplate"))

    /// `PUT users/emailtemplates/:event`.
    static let changeEmailTemplate = RouteDoc(
        "Replaces the email template of an event (server-code key).",
        body: .json(
            .object(
                [
                    "subject": APISchema.string.described("One line"), "text": .string, "html": .string,
                    "enabled": APISchema.boolean.described("Whether the event sends email (default true)"),
                ], required: ["subject", "text", "html"])),
        json: .ref("UserEmailTemplate"))

    // MARK: Profiles

    /// `PUT users/:id`.
    static let updateUser = RouteDoc(
        "Updates a user's profile: one's own, or any with the server-code key.",
        body: .json(
            APISchema.object(["email": emailAddress, "password": passwordValue]).members(0, named: propertyName)
                .described("The properties to change, `password` included; new names become columns of Users")),
        json: .ref("UserProfile"))

    /// `PUT users/:id/status`.
    static let setUserStatus = RouteDoc(
        "Enables or disables a user, or marks it awaiting email confirmation (server-code key).",
        body: .json(
            .object(
                ["userStatus": .choice(["ENABLED", "DISABLED", "EMAIL_CONFIRMATION_PENDING"])],
                required: ["userStatus"])),
        answer: emptyAnswer)

    /// `POST users/verifypassowrd`.
    static let verifyPassword = RouteDoc(
        "Tells whether a password is the logged-in user's.",
        body: .json(.object(["password": nonEmptyString], required: ["password"])),
        json: .object(["valid": .boolean], required: ["valid"]))

    /// `GET users/userclassprops`.
    static let userClassProperties = RouteDoc(
        "Describes the properties of the Users table, password included.", json: .array(.ref("UserClassProperty")))
}
