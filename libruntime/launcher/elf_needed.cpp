#include "elf_needed.hpp"

#include "mapped_file.hpp"

#include <elf.h>

#include <cstring>

namespace cosched::launcher {

namespace {


// Whether the dynamic symbol table imports (leaves undefined) a symbol starting with `prefix`.
bool imports_prefix(const MappedFile& buf, const Elf64_Ehdr& eh, const char* prefix) {
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    if (!buf.read(eh.e_shoff + static_cast<std::uint64_t>(i) * eh.e_shentsize, sh)) return false;
    if (sh.sh_type != SHT_DYNSYM || sh.sh_entsize != sizeof(Elf64_Sym)) continue;
    Elf64_Shdr str{};
    if (!buf.read(eh.e_shoff + static_cast<std::uint64_t>(sh.sh_link) * eh.e_shentsize, str)) return false;
    for (std::uint64_t off = sh.sh_offset; off + sizeof(Elf64_Sym) <= sh.sh_offset + sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym{};
      if (!buf.read(off, sym) || sym.st_shndx != SHN_UNDEF || sym.st_name == 0) continue;
      std::string name;
      if (buf.string_at(str.sh_offset + sym.st_name, name) && name.rfind(prefix, 0) == 0) return true;
    }
  }
  return false;
}

}  // namespace

Result<ElfFacts> elf_facts(const std::string& path) {
  MappedFile buf;
  if (std::string why = buf.open(path); why == "not a regular file") {
    return make_error(Errc::io_error, path + ": not a regular file");
  } else if (!why.empty() && why != "empty file") {
    return make_error(Errc::io_error, "cannot read " + path + ": " + why);
  }
  Elf64_Ehdr eh{};
  if (!buf.read(0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return make_error(Errc::parse_error, path + ": not an ELF file");
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return make_error(Errc::unsupported, path + ": not a 64-bit ELF file");
  ElfFacts facts;
  auto& needed = facts.needed;
  facts.threadprivate_imports = imports_prefix(buf, eh, "__kmpc_threadprivate");
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!buf.read(eh.e_phoff + static_cast<std::uint64_t>(i) * eh.e_phentsize, ph)) break;
    if (ph.p_type == PT_TLS) facts.tls = true;
    if (ph.p_type != PT_DYNAMIC) continue;
    std::vector<std::uint64_t> name_offsets;
    std::uint64_t strtab_vaddr = 0;
    for (std::uint64_t off = ph.p_offset; off + sizeof(Elf64_Dyn) <= ph.p_offset + ph.p_filesz; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d{};
      if (!buf.read(off, d) || d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_NEEDED) name_offsets.push_back(d.d_un.d_val);
      if (d.d_tag == DT_STRTAB) strtab_vaddr = d.d_un.d_ptr;
    }
    std::uint64_t strtab = 0;
    if (!elf_vaddr_to_offset(buf, eh, strtab_vaddr, strtab)) {
      return make_error(Errc::parse_error, path + ": dynamic string table not found");
    }
    for (auto o : name_offsets) {
      std::string name;
      if (buf.string_at(strtab + o, name)) needed.push_back(std::move(name));  // NUL-terminated inside the file
    }
  }
  return facts;
}

}  // namespace cosched::launcher
