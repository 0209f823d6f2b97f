import FlowKit

/// What the journal stores about a run before it starts.
public struct RunMetadata: Sendable {
    /// How the run came to be.
    public enum Kind: String, Sendable {
        case run
        case resume
        case undo
    }

    public var id: String
    public var kind: Kind
    public var parentID: String?
    public var workflowPath: String
    public var content: [UInt8]
    public var args: RunArguments
    public var cwd: String

    public init(id: String, kind: Kind, parentID: String?, workflowPath: String, content: [UInt8], args: RunArguments, cwd: String) {
        self.id = id
        self.kind = kind
        self.parentID = parentID
        self.workflowPath = workflowPath
        self.content = content
        self.args = args
        self.cwd = cwd
    }
}
