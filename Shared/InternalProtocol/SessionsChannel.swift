/// The `LISTEN/NOTIFY` channel users-service announces a user on whenever the user's sessions
/// or roles change (logout, a login that ends older sessions, disable, password or role
/// change), so that every gateway drops the identities it cached for that user.
public enum SessionsChannel {
    /// The channel's name.
    public static let name = "baas_sessions"

    /// `<app id> <user id>`.
    public static func payload(appID: String, userID: String) -> String {
        appID + " " + userID
    }
}
