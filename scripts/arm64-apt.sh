# Sourced (not run): a private apt for Debian 12 arm64 under $cache/apt, its
# own sources, lists, status and package cache, so it neither reads nor
# changes the machine's apt. Needs $cache and $mirror/$security set; defines
# apt_dir and apt_opts (for apt-get and apt-cache). The status file is
# created empty (nothing installed, so every dependency counts) unless it
# exists.
apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" \
  "$apt_dir/sources.list.d" "$apt_dir/preferences.d"
[[ -f $apt_dir/status ]] || : >"$apt_dir/status"
cat >"$apt_dir/sources.list" <<SOURCES
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm-updates main
deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $security bookworm-security main
SOURCES
apt_opts=(
  -o APT::Architecture=arm64 -o APT::Architectures=arm64
  -o Dir::State="$apt_dir" -o Dir::State::Lists="$apt_dir/lists"
  -o Dir::State::Status="$apt_dir/status"
  -o Dir::Cache="$apt_dir" -o Dir::Cache::Archives="$apt_dir/archives"
  -o Dir::Etc::SourceList="$apt_dir/sources.list"
  -o Dir::Etc::SourceParts="$apt_dir/sources.list.d"
  -o Dir::Etc::Preferences="$apt_dir/preferences"
  -o Dir::Etc::PreferencesParts="$apt_dir/preferences.d"
  -o Debug::NoLocking=1 -o APT::Sandbox::User=root
)
