#include "elf_needed.hpp"

#include "file_bytes.hpp"

#include <elf.h>

#include <cstring>

namespace cosched::launcher {

namespace {

template <typename T>
bool read_at(const std::string& buf, std::uint64_t off, T& out) {
  if (off > buf.size() || buf.size() - off < sizeof(T)) return false;
  std::memcpy(&out, buf.data() + off, sizeof(T));
  return true;
}

// Maps a virtual address to a file offset through the PT_LOAD segments.
bool vaddr_to_offset(const std::string& buf, const Elf64_Ehdr& eh, std::uint64_t vaddr, std::uint64_t& off) {
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!read_at(buf, eh.e_phoff + static_cast<std::uint64_t>(i) * eh.e_phentsize, ph)) return false;
    if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
      off = vaddr - ph.p_vaddr + ph.p_offset;
      return true;
    }
  }
  return false;
}

// Whether the dynamic symbol table imports (leaves undefined) a symbol starting with `prefix`.
bool imports_prefix(const std::string& buf, const Elf64_Ehdr& eh, const char* prefix) {
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    if (!read_at(buf, eh.e_shoff + static_cast<std::uint64_t>(i) * eh.e_shentsize, sh)) return false;
    if (sh.sh_type != SHT_DYNSYM || sh.sh_entsize != sizeof(Elf64_Sym)) continue;
    Elf64_Shdr str{};
    if (!read_at(buf, eh.e_shoff + static_cast<std::uint64_t>(sh.sh_link) * eh.e_shentsize, str)) return false;
    for (std::uint64_t off = sh.sh_offset; off + sizeof(Elf64_Sym) <= sh.sh_offset + sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym{};
      if (!read_at(buf, off, sym) || sym.st_shndx != SHN_UNDEF || sym.st_name == 0) continue;
      const std::uint64_t name = str.sh_offset + sym.st_name;
      if (name < buf.size() && std::strncmp(buf.c_str() + name, prefix, std::strlen(prefix)) == 0) return true;
    }
  }
  return false;
}

}  // namespace

Result<ElfFacts> elf_facts(const std::string& path) {
  auto bytes = regular_file_bytes(path);
  if (!bytes.ok()) return bytes.error();
  const std::string& buf = *bytes;
  Elf64_Ehdr eh{};
  if (!read_at(buf, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return make_error(Errc::parse_error, path + ": not an ELF file");
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return make_error(Errc::unsupported, path + ": not a 64-bit ELF file");
  ElfFacts facts;
  auto& needed = facts.needed;
  facts.threadprivate_imports = imports_prefix(buf, eh, "__kmpc_threadprivate");
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!read_at(buf, eh.e_phoff + static_cast<std::uint64_t>(i) * eh.e_phentsize, ph)) break;
    if (ph.p_type == PT_TLS) facts.tls = true;
    if (ph.p_type != PT_DYNAMIC) continue;
    std::vector<std::uint64_t> name_offsets;
    std::uint64_t strtab_vaddr = 0;
    for (std::uint64_t off = ph.p_offset; off + sizeof(Elf64_Dyn) <= ph.p_offset + ph.p_filesz; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d{};
      if (!read_at(buf, off, d) || d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_NEEDED) name_offsets.push_back(d.d_un.d_val);
      if (d.d_tag == DT_STRTAB) strtab_vaddr = d.d_un.d_ptr;
    }
    std::uint64_t strtab = 0;
    if (!vaddr_to_offset(buf, eh, strtab_vaddr, strtab)) {
      return make_error(Errc::parse_error, path + ": dynamic string table not found");
    }
    for (auto o : name_offsets) {
      if (strtab + o >= buf.size()) continue;
      needed.emplace_back(buf.c_str() + strtab + o);  // NUL-terminated inside the file
    }
  }
  return facts;
}

}  // namespace cosched::launcher
