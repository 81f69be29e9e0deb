/// Where URLs of files start in the answer being made: the public base URL, the prefix the
/// client addressed the app by (`/{appId}/{apiKey}`) and `/files/`. The internal server binds
/// it around each public request it serves; outside one it is nil, and `FILE_REF` values answer
/// as bare paths.
public enum FileLinks {
    @TaskLocal public static var base: String?
}
