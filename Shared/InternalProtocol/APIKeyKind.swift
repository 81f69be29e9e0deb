/// The client kinds an app has one API key for, each mapped to a Backendless system role.
package enum APIKeyKind: String, Codable, Sendable, CaseIterable, Hashable {
    case rest = "REST"
    case js = "JS"
    case android = "ANDROID"
    case ios = "IOS"
    case dotnet = "DOTNET"
    case actionScript = "AS"
    case serverCode = "SERVER_CODE"

    /// The system role a request made with this key gets.
    package var role: String {
        switch self {
        case .rest: "RestUser"
        case .js: "JSUser"
        case .android: "AndroidUser"
        case .ios: "IOSUser"
        case .dotnet: "DotNetUser"
        case .actionScript: "ASUser"
        case .serverCode: "ServerCodeUser"
        }
    }
}
