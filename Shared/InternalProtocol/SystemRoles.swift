/// The roles the platform assigns by itself — from the request's authentication state and its
/// API key — which can be neither created, deleted, assigned nor unassigned.
public enum SystemRoles {
    /// A request without a `user-token`.
    public static let notAuthenticated = "NotAuthenticatedUser"
    /// A request with a live `user-token`.
    public static let authenticated = "AuthenticatedUser"

    /// Every system role name.
    public static let all: Set<String> = Set(
        [notAuthenticated, authenticated, "SocialUser", "FacebookUser", "GooglePlusUser", "TwitterUser"]
            + APIKeyKind.allCases.map(\.role))
}
