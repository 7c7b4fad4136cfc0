package tools

// registered is the tools, in the order policies see them: the Engineering
// Agent's table. A new tool is a file of this package (<name>.go and its
// description, <name>.md) and a line here.
var registered = []Tool{
	exitTool,
	getDiffDetailsTool,
	getTaskDetailsTool,
	readDirectoryTool,
	readFileTool,
	findFileTool,
	goToLineTool,
	searchCodeTool,
	searchCodeInFileTool,
	searchClassTool,
	searchMethodTool,
	searchMethodInFileTool,
	searchMethodInClassTool,
	runTestsTool,
	editTool,
}
