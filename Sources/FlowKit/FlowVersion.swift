/// The version of flow, printed by `flow --version`.
public enum FlowVersion {
    public static let string = "0.1.0"
}
