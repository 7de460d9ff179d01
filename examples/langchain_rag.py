"""A LangChain RAG chain with Noema as the retriever. Runs offline: the chat model is a fake that
echoes its prompt, so you can see exactly what the model would receive. Swap in a real chat model
(e.g. ChatOpenAI) to get answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

from noema_langchain import NoemaRetriever


class MarkdownLoader(BaseLoader):
    """Stands for any LangChain loader (TextLoader, DirectoryLoader, ...): one Document per file
    with its path as ``metadata["source"]``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def lazy_load(self) -> Iterator[Document]:
        for path in sorted(self.folder.glob("*.md")):
            yield Document(path.read_text(), metadata={"source": str(path)})


loader = MarkdownLoader(Path(__file__).parent / "docs")
retriever = NoemaRetriever.from_documents(loader.load(), top_k=3, hops=2, max_tokens=200)
prompt = ChatPromptTemplate.from_template(
    "Answer from these facts (one per line, #n are entity ids):\n{context}\n\nQuestion: {question}"
)


def format_docs(docs: list[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs) or "(no facts found)"


chain = (
    {"context": retriever | format_docs, "question": RunnablePassthrough()}
    | prompt
    | ParrotFakeChatModel()
    | StrOutputParser()
)

if __name__ == "__main__":
    question = "Who founded the company that acquired LinkedIn?"
    print(chain.invoke(question))
    print("\nsources:", retriever.invoke(question)[0].metadata["sources"])
