extension Duration {
    /// The duration in whole milliseconds (what the wire, the configuration and SQL intervals count in).
    package var wholeMilliseconds: Int64 {
        components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000
    }
}
