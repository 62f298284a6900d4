// nolint
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/chzyer/readline"
	"github.com/google/shlex"
	"github.com/i2-open/i2goSignals/pkg/logger"
	"github.com/i2-open/i2goSignals/pkg/tlsSupport"
	"github.com/spiffe/go-spiffe/v2/workloadapi"
)

var (
	spiffeSource *workloadapi.X509Source
)

type ParserData struct {
	parser *kong.Kong
	cli    *CLI
}

type Globals struct {
	Config       string     `help:"Location of client config files" env:"GOSIGNALS_HOME" type:"path"`
	Data         ConfigData `kong:"-"`
	ConfigFile   string     `kong:"-"`
	Output       string     `short:"o" help:"To redirect output to a file" type:"path" `
	AppendOutput bool       `short:"a" default:"false" help:"When true, output to file (--output) will be appended"`

	// Authorization string     `help:"The authorization token to use to access an i2goSignals server"`
}

type CLI struct {
	Globals
	Add      AddCmd      `cmd:"" help:"Define a new server to be managed"`
	Login    LoginCmd    `cmd:"" help:"Interactively log in to a server's advertised IdP (PKCE)."`
	Whoami   WhoamiCmd   `cmd:"" help:"Show the current logged-in session for a server."`
	Logout   LogoutCmd   `cmd:"" help:"Clear stored realm session(s): <alias>, --issuer <url>, or --all."`
	Use      UseCmd      `cmd:"" help:"Set the active issuer (realm) for a server."`
	Create   CreateCmd   `cmd:"" help:"Create an issuer KEY, or STREAM"`
	Delete   DeleteCmd   `cmd:"" help:"Delete a stream or server"`
	Select   SelectCmd   `cmd:"" help:"Select a defined server or stream/server to perform operations against"`
	Get      GetCmd      `cmd:"" help:"Get information from SSF servers"`
	Generate GenerateCmd `cmd:"" help:"Generate an event for testing"`
	Poll     PollCmd     `cmd:"" help:"Activate a polling client stream with a server identified by <alias>."`
	Set      SetCmd      `cmd:"" help:"Set configuration items on server"`
	Show     ShowCmd     `cmd:"" help:"Show locally configured information"`
	Token    TokenCmd    `cmd:"" help:"Manage issued tokens"`
	Exit     ExitCmd     `cmd:"" help:"Exit the shell"`
	Help     HelpCmd     `cmd:"" help:"Show help on a command"`
}

var SessionGlobals Globals

type OutputWriter struct {
	output  *os.File
	isReady bool
	err     error
}

/*
GetOutputWriter returns an output writer if one was requested or nil.  If one was requested and the output
cannot be opened an error is returned.
*/
func (cli *CLI) GetOutputWriter() *OutputWriter {
	if cli.Output == "" {
		return &OutputWriter{
			isReady: false,
		}
	}

	if cli.AppendOutput {
		file, err := os.OpenFile(cli.Output, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0644)
		if err != nil {
			fmt.Println(err.Error())
			return &OutputWriter{
				isReady: false,
				err:     err,
			}
		}
		return &OutputWriter{
			output:  file,
			isReady: true,
		}
	}

	file, err := os.OpenFile(cli.Output, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0644)
	if err != nil {
		fmt.Println(err.Error())
		return &OutputWriter{
			isReady: false,
			err:     err,
		}
	}
	return &OutputWriter{
		output:  file,
		isReady: true,
	}

}

func (o *OutputWriter) GetOutput() io.Writer {
	if o.isReady {
		return o.output
	}
	return nil
}
func (o *OutputWriter) WriteString(msg string, andClose bool) {

	if msg != "" && o.isReady {
		_, _ = o.output.WriteString(msg)
		_ = o.output.Sync()
	}
	if andClose {
		o.Close()
	}
}

func (o *OutputWriter) WriteBytes(msgBytes []byte, andClose bool) {
	if len(msgBytes) != 0 && o.isReady {
		_, _ = o.output.Write(msgBytes)
		_ = o.output.Sync()
	}
	if andClose {
		o.Close()
	}
}

func (o *OutputWriter) Close() {
	if o.isReady {
		_ = o.output.Sync()
		o.isReady = false
		_ = o.output.Close()
	}

}

func initParser(cli *CLI) (*ParserData, error) {
	if cli == nil {
		cli = &CLI{}
	}

	cli.Data = ConfigData{
		Servers: map[string]SsfServer{},
	}
	parser, err := kong.New(cli,
		kong.Name("goSignals"),
		kong.Description("i2goSignals client administration tool"),
		kong.ConfigureHelp(kong.HelpOptions{
			Compact:      true,
			Summary:      true,
			Tree:         true,
			NoAppSummary: false,
		}),
		kong.UsageOnError(),
		kong.Writers(os.Stdout, os.Stdout),

		kong.NoDefaultHelp(),
		kong.Bind(&cli.Globals),
		kong.Exit(func(int) {}),
	)
	td := ParserData{
		parser: parser,
		cli:    cli,
	}

	return &td, err
}

// stripQuotes removes surrounding double or single quotes from a string
func stripQuotes(s string) string {
	if len(s) >= 2 {
		if (s[0] == '"' && s[len(s)-1] == '"') || (s[0] == '\'' && s[len(s)-1] == '\'') {
			return s[1 : len(s)-1]
		}
	}
	return s
}

// breakIntoArgs separates the command by spaces while preserving escaped space
func breakIntoArgs(command string) []string {
	res, _ := shlex.Split(command)

	return res
}

func main() {
	fmt.Println("(C)2026 Independent Identity Inc. Licensed Under APL 2.0")
	logger.Init(logger.Options{Level: os.Getenv("LOG_LEVEL")})
	tlsSupport.CheckCaInstalled(nil)

	if tlsSupport.SpiffeEnabled() {
		socket := os.Getenv("SPIFFE_ENDPOINT_SOCKET")
		path := strings.TrimPrefix(socket, "unix://")
		if _, err := os.Stat(path); err != nil {
			fmt.Printf("goSignals: warning: SPIFFE socket %s not found, skipping SPIFFE init\n", path)
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var err error
			spiffeSource, err = workloadapi.NewX509Source(ctx)
			if err != nil {
				fmt.Printf("goSignals: warning: failed to initialize SPIFFE source: %v\n", err)
			} else {
				fmt.Printf("goSignals: SPIFFE source initialized (socket: %s)\n", path)
				defer spiffeSource.Close()
			}
		}
	}

	// Check for script file in environment variable
	scriptFile := stripQuotes(os.Getenv("GOSIGNALS_SCRIPT"))
	var scriptReader *bufio.Reader
	useScriptFile := false

	if scriptFile != "" {
		fmt.Printf("Using script file: %s\n", scriptFile)
		file, err := os.Open(scriptFile)
		if err != nil {
			fmt.Printf("Error opening script file %s: %s\n", scriptFile, err.Error())
			os.Exit(1)
		}
		scriptReader = bufio.NewReader(file)
		useScriptFile = true
		defer func(file *os.File) {
			_ = file.Close()
		}(file)
	}

	console, err := readline.NewEx(&readline.Config{
		Prompt: "goSignals> ",
		// HistoryFile:            os.TempDir() + "/goSignals-history",
		DisableAutoSaveHistory: true,
	})
	if err != nil {
		panic(err)
	}
	defer func(console *readline.Instance) {
		_ = console.Close()
	}(console)

	td, err := initParser(&CLI{})

	// ctx.FatalIfErrorf(err)
	if err != nil {
		fmt.Println(err.Error())
		panic(err)
	}
	oneCommand := false
	initialArgs := os.Args
	if len(initialArgs) > 1 {
		initialArgs = initialArgs[1:]
		firstArg := initialArgs[0]
		if firstArg[0:1] != "-" {
			oneCommand = true
		} else {
			for i, arg := range initialArgs {
				if len(arg) < 9 || !strings.EqualFold("--config=", arg[0:9]) {
					continue
				}
				td.cli.Globals.Config = arg[9:]
				initialArgs = append(initialArgs[0:i], initialArgs[i+1:]...)
			}
		}

	}

	// fmt.Println("Loading existing configuration...")
	if td == nil {
		panic(errors.New("CLI parser failed to initialize"))
	}
	err = td.cli.Data.checkConfigPath(&td.cli.Globals)
	if err != nil {
		fmt.Println("Error reading config directory: " + err.Error())
		panic(-1)
	}
	_ = td.cli.Data.Load(&td.cli.Globals)

	for {
		var args []string
		if oneCommand {
			args = initialArgs
			fullCommand := initialArgs[0]
			for i, arg := range initialArgs {
				if i > 0 {
					fullCommand = fullCommand + " " + arg
				}
			}
			initialArgs = []string{}
			_ = console.SaveHistory(fullCommand)
		} else if useScriptFile {
			line, err := scriptReader.ReadString('\n')
			if err != nil {
				if err == io.EOF {
					// End of script file
					return
				}
				fmt.Printf("Error reading script file: %s\n", err.Error())
				panic(err)
			}
			// Remove trailing newline
			line = strings.TrimSuffix(line, "\n")
			line = strings.TrimSuffix(line, "\r")
			// Skip empty lines and comments
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			fmt.Printf("goSignals > %s\n", line)
			args = strings.Split(line, " ")
		} else {
			line, err := console.Readline()
			if err != nil {
				fmt.Printf("Error reading console: %s\n", err.Error())
				panic(err)
			}
			//line = line[0 : len(line)-1]
			_ = console.SaveHistory(line)
			args = breakIntoArgs(line)
		}

		var ctx *kong.Context
		ctx, err = td.parser.Parse(args)
		// ctx.Bind(&cli.Globals)
		// ctx.Bind(args)

		if err != nil {
			// Put out the help text response
			td.parser.Errorf("%s", err.Error())
			var kerr *kong.ParseError
			if errors.As(err, &kerr) {
				errors.As(err, &kerr)
				fmt.Println(kerr.Error())
				_ = kerr.Context.PrintUsage(false)
			}
			continue
		}

		err = ctx.Run(&td.cli.Globals)

		if err != nil {
			td.parser.Errorf("%s", err)
			continue
		}
		if oneCommand {
			return
		}
	}

}
