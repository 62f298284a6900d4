package main

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/i2-open/i2goSignals/pkg/httpSupport"
	"github.com/i2-open/i2goSignals/pkg/ssfModels"
)

var ConfigFile = "config.json"

type SsfServer struct {
	Alias       string
	Host        string
	ClientToken string // Used to administer streams (scope admin) within a project
	IatToken    string // Used to register new client in the same project
	ProjectId   string
	Streams     map[string]Stream
	// AuthorizationServers caches the OAuth authorization_servers advertised by
	// the server's Protected Resource Metadata. Non-secret; safe for config.json.
	AuthorizationServers []string `json:",omitempty"`
	// ActiveIssuer is the issuer the CLI is currently logged in against for this
	// server. The actual session (tokens) lives in credentials.json keyed by
	// issuer; only this pointer is cached here.
	ActiveIssuer        string `json:",omitempty"`
	ServerConfiguration *model.TransmitterConfiguration
	// OAuthClientConfig caches the NON-SECRET OAuth client-credentials fields
	// (client-id, token-url, scopes) for a foreign SSF transmitter. The CLIent
	// secret is NEVER stored here or in config.json; it is staged in
	// ConfigData.oauthSecrets (in-memory only) or supplied at use time.
	OAuthClientConfig *model.OAuthClientConfig `json:",omitempty"`
}

type Stream struct {
	Alias        string `json:"alias"`
	Id           string `json:"id"`
	Description  string `json:"description"`
	Token        string `json:"token"`
	Endpoint     string `json:"endpoint"`
	Iss          string `json:"iss"`
	Aud          string `json:"aud"` // Note this is a comma separated list because of the way i2scim consumes it
	IssJwksUrl   string `json:"issJwksUrl"`
	ConnectAlias string `json:"connectAlias,omitempty"`
}

type ConfigData struct {
	Selected      string
	Servers       map[string]SsfServer
	Pems          map[string][]byte
	keys          map[string]*rsa.PrivateKey            // parsed keys - don't persist
	streamConfigs map[string]*model.StreamConfiguration // don't store (cached)
	// oauthSecrets stages OAuth client secrets per server alias in memory only.
	// It mirrors the keys/streamConfigs caches above and is NEVER persisted to
	// config.json — the client secret must not live on disk (PRD #83 / #85).
	oauthSecrets map[string]string
}

// stageSecret records an OAuth client secret for the given server alias in the
// in-memory (never-persisted) cache.
func (c *ConfigData) stageSecret(alias, secret string) {
	if c.oauthSecrets == nil {
		c.oauthSecrets = map[string]string{}
	}
	c.oauthSecrets[alias] = secret
}

// stagedSecret returns the in-memory staged OAuth client secret for the alias,
// or "" if none was staged in this process.
func (c *ConfigData) stagedSecret(alias string) string {
	if c.oauthSecrets == nil {
		return ""
	}
	return c.oauthSecrets[alias]
}

// ResolveOAuthSecret resolves the OAuth client secret for a server alias in
// priority order: in-memory staged secret -> flag value -> the named
// environment variable. Scenario (i) (single process) works with no env. A
// blank envVar name skips the env lookup.
func (c *ConfigData) ResolveOAuthSecret(alias, flagSecret, envVar string) string {
	if s := c.stagedSecret(alias); s != "" {
		return s
	}
	if flagSecret != "" {
		return flagSecret
	}
	if envVar != "" {
		return os.Getenv(envVar)
	}
	return ""
}

// BuildServerRegistration assembles the server-side *model.Server body the CLI
// POSTs to a receiver node's /server endpoint to register a foreign SSF
// transmitter. Type is left EMPTY so the receiver node infers it from the auth
// mode (OAuthClientConfig present => ssf). The resolved client secret is placed
// on the returned OAuthClientConfig (it never lived in config.json). This helper
// is consumed by `create stream poll receive --tx-alias` (slice #86).
func (c *ConfigData) BuildServerRegistration(alias, flagSecret, envVar string) (*model.Server, error) {
	srv, exists := c.Servers[alias]
	if !exists {
		return nil, fmt.Errorf("specified alias '%s' is not defined", alias)
	}
	if srv.OAuthClientConfig == nil {
		return nil, fmt.Errorf("server '%s' has no OAuth client configuration", alias)
	}

	oauth := srv.OAuthClientConfig.DeepCopy()
	oauth.ClientSecret = c.ResolveOAuthSecret(alias, flagSecret, envVar)

	return &model.Server{
		Alias:             srv.Alias,
		Host:              srv.Host,
		OAuthClientConfig: oauth,
	}, nil
}

func (c *ConfigData) GetKey(issuerId string) (*rsa.PrivateKey, error) {
	// Ensure cache map is initialized
	if c.keys == nil {
		c.keys = map[string]*rsa.PrivateKey{}
	}
	// Return from cache if present
	if key := c.keys[issuerId]; key != nil {
		return key, nil
	}

	// Validate PEM storage
	if c.Pems == nil {
		return nil, errors.New("no PEMs loaded; configuration not initialized")
	}
	pemBytes, ok := c.Pems[issuerId]
	if !ok || len(pemBytes) == 0 {
		return nil, fmt.Errorf("no PEM found for issuer '%s'", issuerId)
	}

	block, _ := pem.Decode(pemBytes)
	if block == nil || len(block.Bytes) == 0 {
		return nil, errors.New("invalid or corrupt PEM data")
	}

	pkcs8PrivateKey, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	key := pkcs8PrivateKey.(*rsa.PrivateKey)
	c.keys[issuerId] = key // cache the result

	return key, nil
}

/*
GetStreamAndServer returns either the specified stream, server, or server and stream when using <server>.<stream> notation
*/
func (c *ConfigData) GetStreamAndServer(alias string) (*Stream, *SsfServer) {
	if strings.Contains(alias, ".") {
		parts := strings.Split(alias, ".")
		server, exists := c.Servers[parts[0]]
		if !exists {
			return nil, nil
		}
		stream, exists := server.Streams[parts[1]]
		if !exists {
			return nil, &server
		}
		return &stream, &server
	}
	for ks, server := range c.Servers {
		if ks == alias {
			return nil, &server
		}
		for k, stream := range server.Streams {
			if k == alias {
				return &stream, &server

			}
		}
	}
	return nil, nil
}

func (c *ConfigData) ResetStreamConfig(streamAlias string) {
	if c.streamConfigs == nil {
		c.streamConfigs = map[string]*model.StreamConfiguration{}
	}
	_, exist := c.streamConfigs[streamAlias]
	if exist {
		c.streamConfigs[streamAlias] = nil
	}
}

func (c *ConfigData) GetStreamConfig(streamAlias string) (*model.StreamConfiguration, error) {
	if c.streamConfigs == nil {
		c.streamConfigs = map[string]*model.StreamConfiguration{}
	}
	config := c.streamConfigs[streamAlias]
	if config != nil {
		return config, nil
	}
	client := getHttpClient(0)
	stream, server := c.GetStreamAndServer(streamAlias)
	if stream == nil {
		return nil, errors.New("stream alias not defined")
	}
	defer client.CloseIdleConnections()
	config, err := getStreamConfig(client, server, stream)
	if err != nil {
		return nil, err
	}
	c.streamConfigs[streamAlias] = config
	return config, nil
}

func getStreamConfig(client *http.Client, server *SsfServer, stream *Stream) (*model.StreamConfiguration, error) {
	fmt.Println("Retrieving stream configuration...")

	req, err := http.NewRequest(http.MethodGet, server.ServerConfiguration.ConfigurationEndpoint+"?stream_id="+stream.Id, nil)
	if err != nil {
		return nil, err
	}
	if server.ClientToken != "" {
		req.Header.Set("Authorization", "Bearer "+server.ClientToken)
	} else if stream.Token != "" {
		req.Header.Set("Authorization", "Bearer "+stream.Token)
	}

	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		httpSupport.HandleRespClose(resp)
		return nil, errors.New(fmt.Sprintf("Error retrieving configuration for %s: %s", stream.Alias, resp.Status))
	}
	defer httpSupport.HandleRespClose(resp)

	bodyBytes, _ := io.ReadAll(resp.Body)
	var config model.StreamConfiguration
	_ = json.Unmarshal(bodyBytes, &config)
	return &config, nil
}

/*
GetServer returns either the specified server alias, or the currently selected server if alias is ""
*/
func (c *ConfigData) GetServer(alias string) (*SsfServer, error) {
	if alias != "" {
		server, exists := c.Servers[alias]
		if !exists {
			errMsg := fmt.Sprintf("specified alias '%s' is not defined", alias)
			return nil, errors.New(errMsg)
		}
		return &server, nil
	}

	if c.Selected == "" || len(c.Servers) == 0 {
		return nil, errors.New("no servers defined, use 'add server'")
	}

	server := c.Servers[c.Selected]
	return &server, nil
}

// DeleteServer removes a server definition from the configuration
func (c *ConfigData) DeleteServer(alias string, g *Globals) error {
	if alias != "" {
		if _, exists := c.Servers[alias]; !exists {
			return fmt.Errorf("specified alias '%s' is not defined", alias)
		}
		delete(c.Servers, alias)
		return c.Save(g)
	}

	return nil
}

func (c *ConfigData) checkConfigPath(g *Globals) error {
	configPath := g.Config
	if configPath == "" {
		configPath = stripQuotes(os.Getenv("GOSIGNALS_HOME"))
		if configPath == "" {
			configPath = ".goSignals/" + ConfigFile
			usr, err := user.Current()
			if err == nil {
				configPath = filepath.Join(usr.HomeDir, configPath)
			}
		} else {
			fmt.Printf("Using GOSIGNALS_HOME path: %s\n", configPath)
			// When GOSIGNALS_HOME points at a directory (existing dir, or a
			// path with no file extension), it names the home dir — append the
			// config filename so g.ConfigFile is the config FILE and
			// filepath.Dir(g.ConfigFile) is the true home dir. Otherwise treat
			// it as an explicit config file path (GH #143).
			if info, statErr := os.Stat(configPath); (statErr == nil && info.IsDir()) || filepath.Ext(configPath) == "" {
				configPath = filepath.Join(configPath, ConfigFile)
			}
			g.ConfigFile = configPath
			return nil
		}
	}

	dirPath := filepath.Dir(configPath)
	i := len(dirPath)
	if dirPath[i-1:i-1] != "/" {
		dirPath = dirPath + "/"
	}
	baseFile := filepath.Base(configPath)
	if filepath.Ext(baseFile) == "" {
		dirPath = configPath
		baseFile = ConfigFile
	}

	_, err := os.Stat(dirPath)
	if os.IsNotExist(err) {
		fmt.Printf("Config path does not exist check: %s\n", dirPath)
		err = nil
		// path/to/whatever does not exist
		fmt.Printf("Creating new config path: %s\n", dirPath)
		err = os.Mkdir(dirPath, 0770)
		if err != nil {
			fmt.Printf("Error creating directory %s: %s", dirPath, err)
			time.Sleep(5 * time.Minute) // wait long enough to check files in docker
			return err
		}
	}

	g.ConfigFile = configPath

	return nil
}

func (c *ConfigData) Load(g *Globals) error {
	// configFile := filepath.Join(g.Config, ConfigFile)

	// Default all the maps to empty (initialize each independently)
	if c.Pems == nil {
		c.Pems = map[string][]byte{}
	}
	if c.Servers == nil {
		c.Servers = map[string]SsfServer{}
	}
	if c.keys == nil {
		c.keys = map[string]*rsa.PrivateKey{}
	}
	if c.streamConfigs == nil {
		c.streamConfigs = map[string]*model.StreamConfiguration{}
	}

	if _, err := os.Stat(g.ConfigFile); os.IsNotExist(err) {
		return nil // No existing configuration
	}

	configBytes, err := os.ReadFile(g.ConfigFile)
	if err != nil {
		fmt.Println("Error reading configuration: " + err.Error())
		return nil
	}
	if len(configBytes) == 0 {
		return nil
	}
	err = json.Unmarshal(configBytes, c)
	if err != nil {
		fmt.Println("Error parsing stored configuration: " + err.Error())
		return err
	}

	// After unmarshal, ensure non-persisted and optional maps are non-nil
	if c.Pems == nil {
		c.Pems = map[string][]byte{}
	}
	if c.Servers == nil {
		c.Servers = map[string]SsfServer{}
	}
	if c.keys == nil {
		c.keys = map[string]*rsa.PrivateKey{}
	}
	if c.streamConfigs == nil {
		c.streamConfigs = map[string]*model.StreamConfiguration{}
	}

	return nil
}

func (c *ConfigData) Save(g *Globals) error {

	out, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		return err
	}
	fmt.Println("Writing to: " + g.ConfigFile)
	err = os.WriteFile(g.ConfigFile, out, 0660)
	if err != nil {
		fmt.Println("Error saving configuration: " + err.Error())
	}
	return err
}
